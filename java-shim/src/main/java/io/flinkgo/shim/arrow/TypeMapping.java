package io.flinkgo.shim.arrow;

import java.lang.reflect.Field;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.flink.api.common.typeinfo.BasicArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.BasicTypeInfo;
import org.apache.flink.api.common.typeinfo.LocalTimeTypeInfo;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.typeutils.ListTypeInfo;
import org.apache.flink.api.java.typeutils.ObjectArrayTypeInfo;
import org.apache.flink.api.java.typeutils.PojoField;
import org.apache.flink.api.java.typeutils.PojoTypeInfo;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.types.Row;

/**
 * Maps Flink {@code TypeInformation} to flinkgo column types (input side) and column types back
 * to {@code TypeInformation} (output side). Every rejection is an {@link
 * IllegalArgumentException} raised while the job graph is built, naming the field path and the
 * type.
 *
 * <p>DECIMAL rule: {@code BasicTypeInfo.BIG_DEC_TYPE_INFO} carries no precision, so it maps to
 * DECIMAL(38, 18) — the same default Flink's legacy type conversion uses. A value whose scale
 * cannot be reduced to 18 without rounding, or that needs more than 38 digits, fails the task
 * with an error naming the field (it is never rounded). A decimal type info that describes
 * itself as {@code Decimal(p,s)} (the table runtime's BigDecimalTypeInfo) keeps its p and s; we
 * read them from {@code toString()} instead of reflecting into a table-runtime class.
 */
public final class TypeMapping {
    /** Precision and scale of a BigDecimal type that carries none. */
    public static final int DEFAULT_DECIMAL_PRECISION = 38;
    public static final int DEFAULT_DECIMAL_SCALE = 18;

    private static final Pattern DECIMAL_TO_STRING = Pattern.compile("(?i)decimal\\((\\d+),\\s*(\\d+)\\)");

    private static final String SUPPORTED = "BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, STRING, "
            + "BYTES (byte[]), DECIMAL (BigDecimal), TIMESTAMP (LocalDateTime), TIMESTAMP_LTZ (Instant), "
            + "DATE (LocalDate), ARRAY (T[], List<T>), ROW (Row with named fields, POJO)";

    private TypeMapping() {}

    /** Reads a field of a composite value (a Row or a POJO). */
    @FunctionalInterface
    public interface Getter {
        Object get(Object parent);
    }

    /** One input column (or nested field) with the way to read it from its parent value. */
    public static final class InputField {
        public final String name;
        public final String path;
        public final ColumnType type;
        /** Reads this field from the parent composite; null for an array element. */
        public final Getter getter;
        /** ROW: the fields, in order. */
        public final List<InputField> children;
        /** ARRAY: the element. */
        public final InputField element;

        InputField(String name, String path, ColumnType type, Getter getter, List<InputField> children, InputField element) {
            this.name = name;
            this.path = path;
            this.type = type;
            this.getter = getter;
            this.children = children;
            this.element = element;
        }
    }

    /**
     * The user columns of an input record type: a {@link RowTypeInfo} (named fields, in order)
     * or a {@link PojoTypeInfo} (fields in Flink's POJO order, i.e. sorted by name).
     *
     * @throws IllegalArgumentException for any other record type or an unsupported field
     */
    public static List<InputField> inputFields(TypeInformation<?> recordType) {
        if (recordType instanceof RowTypeInfo || recordType instanceof PojoTypeInfo) {
            return compositeFields("", recordType);
        }
        throw new IllegalArgumentException(
                "the input of a Go agent must be a Row with named fields (RowTypeInfo, e.g. Types.ROW_NAMED) "
                        + "or a POJO (PojoTypeInfo); got " + recordType
                        + ". Map the stream to Row or a POJO before GoAgents.connect.");
    }

    /** The ROW column type of a record's user columns. */
    public static ColumnType rowType(List<InputField> fields) {
        List<String> names = new ArrayList<>();
        List<ColumnType> types = new ArrayList<>();
        for (InputField f : fields) {
            names.add(f.name);
            types.add(f.type);
        }
        return ColumnType.row(names, types);
    }

    private static List<InputField> compositeFields(String prefix, TypeInformation<?> t) {
        List<InputField> out = new ArrayList<>();
        if (t instanceof RowTypeInfo) {
            RowTypeInfo r = (RowTypeInfo) t;
            String[] names = r.getFieldNames();
            for (int i = 0; i < names.length; i++) {
                final int idx = i;
                final String name = names[i];
                Getter g = p -> rowField((Row) p, idx, name);
                out.add(field(name, prefix + name, r.getTypeAt(i), g));
            }
        } else {
            PojoTypeInfo<?> p = (PojoTypeInfo<?>) t;
            for (int i = 0; i < p.getArity(); i++) {
                PojoField pf = p.getPojoFieldAt(i);
                Field f = pf.getField();
                // A POJO's fields are public or have getters/setters; Flink's own PojoSerializer
                // reads them the same way. This is reflection on the user's class, not on Flink.
                f.setAccessible(true);
                Getter g = parent -> {
                    try {
                        return f.get(parent);
                    } catch (IllegalAccessException e) {
                        throw new IllegalStateException("cannot read POJO field " + f, e);
                    }
                };
                out.add(field(f.getName(), prefix + f.getName(), pf.getTypeInformation(), g));
            }
        }
        return out;
    }

    private static Object rowField(Row row, int index, String name) {
        // A Row built with Row.withNames has no positions; one built positionally has no names.
        return row.getFieldNames(false) == null ? row.getField(index) : row.getField(name);
    }

    private static InputField field(String name, String path, TypeInformation<?> t, Getter getter) {
        if (t instanceof RowTypeInfo || t instanceof PojoTypeInfo) {
            List<InputField> children = compositeFields(path + ".", t);
            return new InputField(name, path, rowType(children), getter, children, null);
        }
        TypeInformation<?> elementType = elementType(t);
        if (elementType != null) {
            InputField element = field(ColumnType.LIST_ITEM, path + "[]", elementType, null);
            return new InputField(name, path, ColumnType.array(element.type), getter, List.of(), element);
        }
        return new InputField(name, path, atomic(path, t), getter, List.of(), null);
    }

    private static TypeInformation<?> elementType(TypeInformation<?> t) {
        if (t instanceof BasicArrayTypeInfo) {
            return ((BasicArrayTypeInfo<?, ?>) t).getComponentInfo();
        }
        if (t instanceof ObjectArrayTypeInfo) {
            return ((ObjectArrayTypeInfo<?, ?>) t).getComponentInfo();
        }
        if (t instanceof ListTypeInfo) {
            return ((ListTypeInfo<?>) t).getElementTypeInfo();
        }
        return null;
    }

    private static ColumnType atomic(String path, TypeInformation<?> t) {
        if (t.equals(PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO)) {
            return ColumnType.of(ColumnType.Kind.BYTES);
        }
        Class<?> c = t.getTypeClass();
        if (t instanceof BasicTypeInfo || t instanceof LocalTimeTypeInfo) {
            if (c == Boolean.class) return ColumnType.of(ColumnType.Kind.BOOLEAN);
            if (c == Byte.class) return ColumnType.of(ColumnType.Kind.TINYINT);
            if (c == Short.class) return ColumnType.of(ColumnType.Kind.SMALLINT);
            if (c == Integer.class) return ColumnType.of(ColumnType.Kind.INT);
            if (c == Long.class) return ColumnType.of(ColumnType.Kind.BIGINT);
            if (c == Float.class) return ColumnType.of(ColumnType.Kind.FLOAT);
            if (c == Double.class) return ColumnType.of(ColumnType.Kind.DOUBLE);
            if (c == String.class) return ColumnType.of(ColumnType.Kind.STRING);
            if (c == Instant.class) return ColumnType.of(ColumnType.Kind.TIMESTAMP_LTZ);
            if (c == LocalDateTime.class) return ColumnType.of(ColumnType.Kind.TIMESTAMP);
            if (c == LocalDate.class) return ColumnType.of(ColumnType.Kind.DATE);
        }
        if (c == BigDecimal.class) {
            Matcher m = DECIMAL_TO_STRING.matcher(String.valueOf(t));
            if (m.matches()) {
                try {
                    return ColumnType.decimal(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)));
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("field '" + path + "': " + e.getMessage(), e);
                }
            }
            return ColumnType.decimal(DEFAULT_DECIMAL_PRECISION, DEFAULT_DECIMAL_SCALE);
        }
        throw new IllegalArgumentException(
                "field '" + path + "' has type " + t + ", which flinkgo cannot send to Go; supported: " + SUPPORTED);
    }

    /**
     * Input fields for Rows of a given column type (positional Rows; nested ROWs are Rows,
     * ARRAYs are Java arrays or Lists). Used to encode batches of a known column type, e.g.
     * OUTPUT batches in tests and fakes.
     */
    public static List<InputField> rowFields(ColumnType row) {
        List<InputField> out = new ArrayList<>();
        for (int i = 0; i < row.fieldNames().size(); i++) {
            final int idx = i;
            String name = row.fieldNames().get(i);
            out.add(typedField(name, name, row.fieldTypes().get(i), p -> rowField((Row) p, idx, name)));
        }
        return out;
    }

    private static InputField typedField(String name, String path, ColumnType t, Getter getter) {
        switch (t.kind()) {
            case ROW: {
                List<InputField> children = new ArrayList<>();
                for (int i = 0; i < t.fieldNames().size(); i++) {
                    final int idx = i;
                    String n = t.fieldNames().get(i);
                    children.add(typedField(n, path + "." + n, t.fieldTypes().get(i), p -> rowField((Row) p, idx, n)));
                }
                return new InputField(name, path, t, getter, children, null);
            }
            case ARRAY:
                return new InputField(name, path, t, getter, List.of(),
                        typedField(ColumnType.LIST_ITEM, path + "[]", t.element(), null));
            default:
                return new InputField(name, path, t, getter, List.of(), null);
        }
    }

    // ---- output side ---------------------------------------------------------------------

    /** The Flink type of a column type (output rows). */
    public static TypeInformation<?> toTypeInfo(ColumnType t) {
        switch (t.kind()) {
            case BOOLEAN: return Types.BOOLEAN;
            case TINYINT: return Types.BYTE;
            case SMALLINT: return Types.SHORT;
            case INT: return Types.INT;
            case BIGINT: return Types.LONG;
            case FLOAT: return Types.FLOAT;
            case DOUBLE: return Types.DOUBLE;
            case STRING: return Types.STRING;
            case BYTES: return PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO;
            case DECIMAL: return Types.BIG_DEC;
            case TIMESTAMP: return Types.LOCAL_DATE_TIME;
            case TIMESTAMP_LTZ: return Types.INSTANT;
            case DATE: return Types.LOCAL_DATE;
            case ARRAY: return Types.OBJECT_ARRAY(toTypeInfo(t.element()));
            case ROW:
                TypeInformation<?>[] types = new TypeInformation<?>[t.fieldTypes().size()];
                for (int i = 0; i < types.length; i++) {
                    types[i] = toTypeInfo(t.fieldTypes().get(i));
                }
                return Types.ROW_NAMED(t.fieldNames().toArray(new String[0]), types);
            default: throw new IllegalStateException("unhandled kind " + t.kind());
        }
    }

    /** The output row type of an agent: a {@link RowTypeInfo} with the manifest's named columns. */
    public static RowTypeInfo outputRowType(ColumnType row) {
        return (RowTypeInfo) toTypeInfo(row);
    }
}
