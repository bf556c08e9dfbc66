package io.flinkgo.shim.arrow;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Parses the Flink SQL type names of the describe manifest into column types: {@code BOOLEAN},
 * {@code TINYINT}, {@code SMALLINT}, {@code INT}/{@code INTEGER}, {@code BIGINT}, {@code FLOAT},
 * {@code DOUBLE}, {@code STRING}/{@code VARCHAR}, {@code BYTES}/{@code VARBINARY},
 * {@code DECIMAL(p, s)}, {@code TIMESTAMP(p)}, {@code TIMESTAMP_LTZ(p)} (p ≤ 6; carried as
 * microseconds), {@code DATE}, {@code ARRAY<T>}, {@code ROW<name T, ...>} (names may be
 * back-quoted). Case-insensitive. Anything else is an {@link IllegalArgumentException} naming
 * the position.
 */
public final class SqlTypeParser {
    private final String src;
    private int pos;

    private SqlTypeParser(String src) {
        this.src = src;
    }

    public static ColumnType parse(String typeName) {
        SqlTypeParser p = new SqlTypeParser(typeName);
        ColumnType t = p.type();
        p.skipSpace();
        if (p.pos != p.src.length()) {
            throw p.error("unexpected text");
        }
        return t;
    }

    private ColumnType type() {
        String word = word().toUpperCase(Locale.ROOT);
        switch (word) {
            case "BOOLEAN": return ColumnType.of(ColumnType.Kind.BOOLEAN);
            case "TINYINT": return ColumnType.of(ColumnType.Kind.TINYINT);
            case "SMALLINT": return ColumnType.of(ColumnType.Kind.SMALLINT);
            case "INT":
            case "INTEGER": return ColumnType.of(ColumnType.Kind.INT);
            case "BIGINT": return ColumnType.of(ColumnType.Kind.BIGINT);
            case "FLOAT": return ColumnType.of(ColumnType.Kind.FLOAT);
            case "DOUBLE": return ColumnType.of(ColumnType.Kind.DOUBLE);
            case "STRING":
            case "VARCHAR": return ColumnType.of(ColumnType.Kind.STRING);
            case "BYTES":
            case "VARBINARY": return ColumnType.of(ColumnType.Kind.BYTES);
            case "DATE": return ColumnType.of(ColumnType.Kind.DATE);
            case "DECIMAL": {
                expect('(');
                int p = number();
                int s = 0;
                if (peek(',')) {
                    expect(',');
                    s = number();
                }
                expect(')');
                try {
                    return ColumnType.decimal(p, s);
                } catch (IllegalArgumentException e) {
                    throw error(e.getMessage());
                }
            }
            case "TIMESTAMP":
            case "TIMESTAMP_LTZ": {
                if (peek('(')) {
                    expect('(');
                    int p = number();
                    if (p > ColumnType.TIMESTAMP_PRECISION) {
                        throw error(word + "(" + p + ") is finer than microseconds, the precision on the wire");
                    }
                    expect(')');
                }
                return ColumnType.of(word.equals("TIMESTAMP") ? ColumnType.Kind.TIMESTAMP : ColumnType.Kind.TIMESTAMP_LTZ);
            }
            case "ARRAY": {
                expect('<');
                ColumnType e = type();
                expect('>');
                return ColumnType.array(e);
            }
            case "ROW": {
                expect('<');
                List<String> names = new ArrayList<>();
                List<ColumnType> types = new ArrayList<>();
                do {
                    if (!names.isEmpty()) {
                        expect(',');
                    }
                    names.add(name());
                    types.add(type());
                    skipSpace();
                } while (peek(','));
                expect('>');
                try {
                    return ColumnType.row(names, types);
                } catch (IllegalArgumentException e) {
                    throw error(e.getMessage());
                }
            }
            default:
                throw error("unsupported type '" + word + "'");
        }
    }

    private String name() {
        skipSpace();
        if (pos < src.length() && src.charAt(pos) == '`') {
            StringBuilder b = new StringBuilder();
            pos++;
            while (true) {
                if (pos >= src.length()) {
                    throw error("unterminated `name`");
                }
                char c = src.charAt(pos++);
                if (c == '`') {
                    if (pos < src.length() && src.charAt(pos) == '`') {
                        b.append('`');
                        pos++;
                        continue;
                    }
                    return b.toString();
                }
                b.append(c);
            }
        }
        return word();
    }

    private String word() {
        skipSpace();
        int start = pos;
        while (pos < src.length() && (Character.isLetterOrDigit(src.charAt(pos)) || src.charAt(pos) == '_')) {
            pos++;
        }
        if (start == pos) {
            throw error("expected a name");
        }
        return src.substring(start, pos);
    }

    private int number() {
        skipSpace();
        int start = pos;
        while (pos < src.length() && Character.isDigit(src.charAt(pos))) {
            pos++;
        }
        if (start == pos || pos - start > 4) {
            throw error("expected a small number");
        }
        return Integer.parseInt(src.substring(start, pos));
    }

    private boolean peek(char c) {
        skipSpace();
        return pos < src.length() && src.charAt(pos) == c;
    }

    private void expect(char c) {
        if (!peek(c)) {
            throw error("expected '" + c + "'");
        }
        pos++;
    }

    private void skipSpace() {
        while (pos < src.length() && Character.isWhitespace(src.charAt(pos))) {
            pos++;
        }
    }

    private IllegalArgumentException error(String what) {
        return new IllegalArgumentException("type '" + src + "' at position " + pos + ": " + what);
    }
}
