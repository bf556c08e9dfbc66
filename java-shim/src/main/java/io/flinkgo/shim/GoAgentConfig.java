package io.flinkgo.shim;

import java.io.Serializable;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

import org.apache.flink.configuration.Configuration;

/**
 * The options of one Go agent operator: Flink Agents option names where the meaning is the
 * same, flinkgo's own under {@code go.} (see {@link GoAgentOptions}). Immutable and
 * serialisable; it travels inside the operator factory.
 *
 * <p>Known options are type-checked when they are set: a wrong type or range throws {@link
 * IllegalArgumentException} naming the option. Any other name is kept as a string and must be
 * declared by the agent in the binary's {@code describe} manifest; {@link GoAgents#connect}
 * checks that when the job graph is built ({@link #checkKnown}), so a typo fails the job build
 * instead of being ignored. Nothing invalid is ever replaced by a default.
 */
public final class GoAgentConfig implements Serializable {
    private static final long serialVersionUID = 1L;

    /** The prefix of agent options in the Flink configuration ({@code agent:} section in YAML). */
    public static final String FLINK_CONFIG_PREFIX = "agent.";

    // Canonical string values of the options that were set, by name (sorted for stable OPENs).
    private final TreeMap<String, String> values;

    private GoAgentConfig(TreeMap<String, String> values) {
        this.values = values;
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * Reads the {@code agent.*} keys of a Flink configuration (the {@code agent:} section of the
     * YAML file; Flink flattens nested keys with {@code .}), with the prefix removed.
     */
    public static Builder fromFlinkConfiguration(Configuration flinkConfig) {
        Builder b = builder();
        for (Map.Entry<String, String> e : new TreeMap<>(flinkConfig.toMap()).entrySet()) {
            if (e.getKey().startsWith(FLINK_CONFIG_PREFIX)) {
                b.set(e.getKey().substring(FLINK_CONFIG_PREFIX.length()), e.getValue());
            }
        }
        return b;
    }

    /**
     * Reads a nested map such as a parsed {@code agent:} YAML section; nested maps are flattened
     * with {@code .} ({@code go: {batch: {size: 10}}} is {@code go.batch.size=10}).
     */
    public static Builder fromMap(Map<String, ?> section) {
        Builder b = builder();
        flatten("", section, b);
        return b;
    }

    private static void flatten(String prefix, Map<String, ?> m, Builder b) {
        for (Map.Entry<String, ?> e : m.entrySet()) {
            String key = prefix + e.getKey();
            Object v = e.getValue();
            if (v instanceof Map) {
                @SuppressWarnings("unchecked")
                Map<String, ?> child = (Map<String, ?>) v;
                flatten(key + ".", child, b);
            } else if (v == null) {
                throw new IllegalArgumentException("option " + key + ": value is null");
            } else if (v instanceof Collection) {
                throw new IllegalArgumentException("option " + key + ": a list is not a valid option value");
            } else {
                b.set(key, String.valueOf(v));
            }
        }
    }

    /** The value of a known option: the one set, else its default (may be {@code null}). */
    public <T> T get(AgentOption<T> option) {
        String raw = values.get(option.name());
        return raw == null ? option.defaultValue() : option.parse(raw);
    }

    /** Whether an option was set explicitly. */
    public boolean isSet(String name) {
        return values.containsKey(name);
    }

    /** The explicitly set options, canonical strings, sorted by name. */
    public Map<String, String> explicitValues() {
        return Collections.unmodifiableMap(values);
    }

    /**
     * Every option passed to Go in OPEN, as strings: each known option with a value (set or
     * default) and every agent-declared option that was set. Sorted by name.
     */
    public Map<String, String> toWireOptions() {
        TreeMap<String, String> out = new TreeMap<>();
        for (AgentOption<?> o : GoAgentOptions.ALL.values()) {
            String v = renderEffective(o);
            if (v != null) {
                out.put(o.name(), v);
            }
        }
        out.putAll(values);
        return out;
    }

    private <T> String renderEffective(AgentOption<T> o) {
        T v = get(o);
        return v == null ? null : o.render(v);
    }

    /**
     * Checks that every option that is not one of the shim's is declared by the agent.
     *
     * @param agentName for the message
     * @param declared option names from the agent's describe manifest
     * @throws IllegalArgumentException naming the first unknown option
     */
    public void checkKnown(String agentName, Collection<String> declared) {
        for (String name : values.keySet()) {
            if (!GoAgentOptions.ALL.containsKey(name) && !declared.contains(name)) {
                throw new IllegalArgumentException(
                        "unknown option '" + name + "': it is neither a flinkgo option "
                                + GoAgentOptions.ALL.keySet() + " nor declared by agent '" + agentName
                                + "' (declares " + declared + ")");
            }
        }
    }

    /** Cross-option checks that do not need the manifest. */
    void validate() {
        if (get(GoAgentOptions.GO_BINARY) == null) {
            throw new IllegalArgumentException("option go.binary: required (path or distributed-cache name of the Go agent binary)");
        }
        if ("kafka".equals(get(GoAgentOptions.ACTION_STATE_STORE_BACKEND))
                && get(GoAgentOptions.KAFKA_ACTION_STATE_TOPIC) == null) {
            throw new IllegalArgumentException(
                    "option kafkaActionStateTopic: required when actionStateStoreBackend=kafka");
        }
        long batchBytes = get(GoAgentOptions.GO_BATCH_BYTES);
        long maxFrame = get(GoAgentOptions.GO_MAX_FRAME_BYTES);
        if (batchBytes >= maxFrame) {
            throw new IllegalArgumentException(
                    "option go.batch.bytes: " + batchBytes + " must be below go.max.frame.bytes (" + maxFrame + ")");
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof GoAgentConfig && ((GoAgentConfig) o).values.equals(values);
    }

    @Override
    public int hashCode() {
        return values.hashCode();
    }

    @Override
    public String toString() {
        return "GoAgentConfig" + values;
    }

    /** Builds a {@link GoAgentConfig}; every setter validates at once. */
    public static final class Builder {
        private final TreeMap<String, String> values = new TreeMap<>();

        private Builder() {}

        /** Sets a known option from a typed value. */
        public <T> Builder set(AgentOption<T> option, T value) {
            values.put(option.name(), option.render(option.check(value)));
            return this;
        }

        /**
         * Sets an option from a string. A known option is parsed and checked now; any other name
         * is kept and checked against the agent's manifest when the job graph is built.
         */
        public Builder set(String name, String value) {
            Objects.requireNonNull(name, "option name");
            if (name.isBlank()) {
                throw new IllegalArgumentException("option name is empty");
            }
            Objects.requireNonNull(value, () -> "option " + name + ": value is null");
            AgentOption<?> known = GoAgentOptions.ALL.get(name);
            values.put(name, known == null ? value : renderParsed(known, value));
            return this;
        }

        private static <T> String renderParsed(AgentOption<T> o, String raw) {
            return o.render(o.parse(raw));
        }

        /** Sets every entry of a map with {@link #set(String, String)}. */
        public Builder setAll(Map<String, String> options) {
            new LinkedHashMap<>(options).forEach(this::set);
            return this;
        }

        public Builder binary(String pathOrCacheName) {
            return set(GoAgentOptions.GO_BINARY, pathOrCacheName);
        }

        public Builder agent(String name) {
            return set(GoAgentOptions.GO_AGENT, name);
        }

        public Builder batchSize(int rows) {
            return set(GoAgentOptions.GO_BATCH_SIZE, rows);
        }

        public Builder batchTimeoutMs(long ms) {
            return set(GoAgentOptions.GO_BATCH_TIMEOUT_MS, ms);
        }

        public Builder creditRows(long rows) {
            return set(GoAgentOptions.GO_CREDIT_ROWS, rows);
        }

        /** Builds; fails if {@code go.binary} is missing or options contradict each other. */
        public GoAgentConfig build() {
            GoAgentConfig c = new GoAgentConfig(new TreeMap<>(values));
            c.validate();
            return c;
        }
    }
}
