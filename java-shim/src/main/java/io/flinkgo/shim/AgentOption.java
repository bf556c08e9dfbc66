package io.flinkgo.shim;

import java.io.Serializable;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

import org.apache.flink.configuration.MemorySize;
import org.apache.flink.util.TimeUtils;

/**
 * One typed option of a Go agent, in the style of Flink's {@code ConfigOption}: a name, a type,
 * a default ({@code null} = unset) and a doc string that names the default.
 *
 * <p>Values are parsed from strings (code, YAML) and rendered back to the canonical string that
 * is passed to Go in OPEN: integers in decimal, booleans as {@code true}/{@code false},
 * durations as {@code <n>ms}, sizes as a byte count.
 *
 * @param <T> the Java type of the value
 */
public final class AgentOption<T> implements Serializable {
    private static final long serialVersionUID = 1L;

    /** The value kinds an option can have. */
    public enum Kind {
        STRING,
        INT,
        LONG,
        BOOLEAN,
        DURATION,
        BYTES,
        ENUM
    }

    private final String name;
    private final Kind kind;
    private final T defaultValue;
    private final String doc;
    private final long min;
    private final long max;
    private final List<String> choices;

    private AgentOption(String name, Kind kind, T defaultValue, String doc, long min, long max, List<String> choices) {
        this.name = name;
        this.kind = kind;
        this.defaultValue = defaultValue;
        this.doc = doc;
        this.min = min;
        this.max = max;
        this.choices = choices;
    }

    static AgentOption<String> string(String name, String def, String doc) {
        return new AgentOption<>(name, Kind.STRING, def, doc, 0, 0, List.of());
    }

    static AgentOption<String> choice(String name, String def, String doc, String... choices) {
        return new AgentOption<>(name, Kind.ENUM, def, doc, 0, 0, Arrays.asList(choices));
    }

    static AgentOption<Integer> integer(String name, Integer def, int min, int max, String doc) {
        return new AgentOption<>(name, Kind.INT, def, doc, min, max, List.of());
    }

    static AgentOption<Long> longValue(String name, Long def, long min, long max, String doc) {
        return new AgentOption<>(name, Kind.LONG, def, doc, min, max, List.of());
    }

    static AgentOption<Boolean> bool(String name, Boolean def, String doc) {
        return new AgentOption<>(name, Kind.BOOLEAN, def, doc, 0, 0, List.of());
    }

    static AgentOption<Duration> duration(String name, Duration def, String doc) {
        return new AgentOption<>(name, Kind.DURATION, def, doc, 0, Long.MAX_VALUE, List.of());
    }

    static AgentOption<Long> bytes(String name, Long def, long min, long max, String doc) {
        return new AgentOption<>(name, Kind.BYTES, def, doc, min, max, List.of());
    }

    public String name() {
        return name;
    }

    public Kind kind() {
        return kind;
    }

    /** The default, or {@code null} when the option is unset by default. */
    public T defaultValue() {
        return defaultValue;
    }

    public String doc() {
        return doc;
    }

    /** For {@link Kind#ENUM}: the accepted values. */
    public List<String> choices() {
        return choices;
    }

    /**
     * Parses a string value.
     *
     * @throws IllegalArgumentException naming the option, the value and the expected type
     */
    @SuppressWarnings("unchecked")
    public T parse(String raw) {
        Objects.requireNonNull(raw, () -> "option " + name + ": value is null");
        String s = raw.trim();
        try {
            switch (kind) {
                case STRING:
                    if (s.isEmpty()) {
                        throw bad(raw, "a non-empty string");
                    }
                    return (T) s;
                case ENUM:
                    String lower = s.toLowerCase(Locale.ROOT);
                    if (!choices.contains(lower)) {
                        throw bad(raw, "one of " + choices);
                    }
                    return (T) lower;
                case INT:
                    return (T) Integer.valueOf((int) checkRange(raw, Long.parseLong(s)));
                case LONG:
                    return (T) Long.valueOf(checkRange(raw, Long.parseLong(s)));
                case BOOLEAN:
                    if (s.equalsIgnoreCase("true")) {
                        return (T) Boolean.TRUE;
                    }
                    if (s.equalsIgnoreCase("false")) {
                        return (T) Boolean.FALSE;
                    }
                    throw bad(raw, "true or false");
                case DURATION:
                    Duration d = TimeUtils.parseDuration(s);
                    if (d.isNegative()) {
                        throw bad(raw, "a non-negative duration");
                    }
                    return (T) d;
                case BYTES:
                    return (T) Long.valueOf(checkRange(raw, MemorySize.parseBytes(s)));
                default:
                    throw new IllegalStateException("unhandled kind " + kind);
            }
        } catch (NumberFormatException e) {
            throw bad(raw, kind == Kind.INT ? "an integer" : "a long integer");
        } catch (IllegalArgumentException e) {
            if (e.getMessage() != null && e.getMessage().startsWith("option " + name + ":")) {
                throw e;
            }
            throw bad(raw, describeType() + " (" + e.getMessage() + ")");
        }
    }

    /** Checks a typed value; returns it. */
    T check(T value) {
        Objects.requireNonNull(value, () -> "option " + name + ": value is null");
        return parse(render(value));
    }

    /** The canonical string of a value, as passed to Go. */
    public String render(T value) {
        switch (kind) {
            case DURATION:
                return ((Duration) value).toMillis() + "ms";
            case BOOLEAN:
                return ((Boolean) value) ? "true" : "false";
            default:
                return String.valueOf(value);
        }
    }

    private long checkRange(String raw, long v) {
        if (v < min || v > max) {
            throw bad(raw, "a value in [" + min + ", " + max + "]");
        }
        return v;
    }

    private IllegalArgumentException bad(String raw, String want) {
        return new IllegalArgumentException(
                "option " + name + ": invalid value '" + raw + "', expected " + want);
    }

    private String describeType() {
        switch (kind) {
            case DURATION:
                return "a duration such as '1 s' or '500 ms'";
            case BYTES:
                return "a size such as '1mb' or '1048576'";
            default:
                return kind.name().toLowerCase(Locale.ROOT);
        }
    }

    @Override
    public String toString() {
        return name;
    }
}
