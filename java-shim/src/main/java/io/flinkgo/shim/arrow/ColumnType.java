package io.flinkgo.shim.arrow;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;

/**
 * The logical type of one column in flinkgo's type mapping (protocol.md, "Type mapping"), the
 * meeting point of both directions: Flink {@code TypeInformation} → column type → Arrow field
 * for input, and manifest SQL type name → column type → Arrow field / {@code TypeInformation}
 * for output. Immutable.
 */
public final class ColumnType {
    /** The kinds of the type mapping table; names are the Flink SQL names. */
    public enum Kind {
        BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, STRING, BYTES,
        DECIMAL, TIMESTAMP, TIMESTAMP_LTZ, DATE, ARRAY, ROW
    }

    /** The precision of TIMESTAMP / TIMESTAMP_LTZ on the wire: microseconds. */
    public static final int TIMESTAMP_PRECISION = 6;

    /** Largest DECIMAL precision (decimal128). */
    public static final int MAX_DECIMAL_PRECISION = 38;

    /** The child field name Arrow implementations use for list elements. */
    public static final String LIST_ITEM = "item";

    private final Kind kind;
    private final int precision;
    private final int scale;
    private final ColumnType element;
    private final List<String> fieldNames;
    private final List<ColumnType> fieldTypes;

    private ColumnType(Kind kind, int precision, int scale, ColumnType element, List<String> names, List<ColumnType> types) {
        this.kind = kind;
        this.precision = precision;
        this.scale = scale;
        this.element = element;
        this.fieldNames = names;
        this.fieldTypes = types;
    }

    /** A type without parameters (everything but DECIMAL, ARRAY and ROW). */
    public static ColumnType of(Kind kind) {
        if (kind == Kind.DECIMAL || kind == Kind.ARRAY || kind == Kind.ROW) {
            throw new IllegalArgumentException(kind + " needs parameters");
        }
        return new ColumnType(kind, 0, 0, null, List.of(), List.of());
    }

    public static ColumnType decimal(int precision, int scale) {
        if (precision < 1 || precision > MAX_DECIMAL_PRECISION || scale < 0 || scale > precision) {
            throw new IllegalArgumentException(
                    "DECIMAL(" + precision + ", " + scale + ") is out of range: need 1 <= precision <= 38 and 0 <= scale <= precision");
        }
        return new ColumnType(Kind.DECIMAL, precision, scale, null, List.of(), List.of());
    }

    public static ColumnType array(ColumnType element) {
        return new ColumnType(Kind.ARRAY, 0, 0, Objects.requireNonNull(element), List.of(), List.of());
    }

    public static ColumnType row(List<String> names, List<ColumnType> types) {
        if (names.size() != types.size()) {
            throw new IllegalArgumentException("ROW: " + names.size() + " names but " + types.size() + " types");
        }
        if (names.stream().distinct().count() != names.size()) {
            throw new IllegalArgumentException("ROW: duplicate field names in " + names);
        }
        return new ColumnType(Kind.ROW, 0, 0, null,
                Collections.unmodifiableList(new ArrayList<>(names)),
                Collections.unmodifiableList(new ArrayList<>(types)));
    }

    public Kind kind() {
        return kind;
    }

    public int precision() {
        return precision;
    }

    public int scale() {
        return scale;
    }

    /** ARRAY only: the element type. */
    public ColumnType element() {
        return element;
    }

    /** ROW only. */
    public List<String> fieldNames() {
        return fieldNames;
    }

    /** ROW only. */
    public List<ColumnType> fieldTypes() {
        return fieldTypes;
    }

    /** The Arrow type of this column (without children). */
    public ArrowType arrowType() {
        switch (kind) {
            case BOOLEAN: return ArrowType.Bool.INSTANCE;
            case TINYINT: return new ArrowType.Int(8, true);
            case SMALLINT: return new ArrowType.Int(16, true);
            case INT: return new ArrowType.Int(32, true);
            case BIGINT: return new ArrowType.Int(64, true);
            case FLOAT: return new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE);
            case DOUBLE: return new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
            case STRING: return ArrowType.Utf8.INSTANCE;
            case BYTES: return ArrowType.Binary.INSTANCE;
            case DECIMAL: return new ArrowType.Decimal(precision, scale, 128);
            case TIMESTAMP: return new ArrowType.Timestamp(TimeUnit.MICROSECOND, null);
            case TIMESTAMP_LTZ: return new ArrowType.Timestamp(TimeUnit.MICROSECOND, "UTC");
            case DATE: return new ArrowType.Date(DateUnit.DAY);
            case ARRAY: return ArrowType.List.INSTANCE;
            case ROW: return ArrowType.Struct.INSTANCE;
            default: throw new IllegalStateException("unhandled kind " + kind);
        }
    }

    /** The Arrow field of a column of this type; user columns are always nullable. */
    public Field toArrowField(String name) {
        List<Field> children = new ArrayList<>();
        if (kind == Kind.ARRAY) {
            children.add(element.toArrowField(LIST_ITEM));
        } else if (kind == Kind.ROW) {
            for (int i = 0; i < fieldNames.size(); i++) {
                children.add(fieldTypes.get(i).toArrowField(fieldNames.get(i)));
            }
        }
        return new Field(name, FieldType.nullable(arrowType()), children);
    }

    /** The Flink SQL spelling, as in the describe manifest ({@code ROW<a INT, b ARRAY<STRING>>}). */
    @Override
    public String toString() {
        switch (kind) {
            case DECIMAL: return "DECIMAL(" + precision + ", " + scale + ")";
            case TIMESTAMP: return "TIMESTAMP(" + TIMESTAMP_PRECISION + ")";
            case TIMESTAMP_LTZ: return "TIMESTAMP_LTZ(" + TIMESTAMP_PRECISION + ")";
            case ARRAY: return "ARRAY<" + element + ">";
            case ROW:
                StringBuilder b = new StringBuilder("ROW<");
                for (int i = 0; i < fieldNames.size(); i++) {
                    b.append(i == 0 ? "" : ", ").append(quoteIfNeeded(fieldNames.get(i))).append(' ').append(fieldTypes.get(i));
                }
                return b.append('>').toString();
            default: return kind.name();
        }
    }

    private static String quoteIfNeeded(String name) {
        return name.matches("[A-Za-z_][A-Za-z0-9_]*") ? name : "`" + name.replace("`", "``") + "`";
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof ColumnType)) {
            return false;
        }
        ColumnType c = (ColumnType) o;
        return kind == c.kind && precision == c.precision && scale == c.scale
                && Objects.equals(element, c.element) && fieldNames.equals(c.fieldNames) && fieldTypes.equals(c.fieldTypes);
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, precision, scale, element, fieldNames, fieldTypes);
    }
}
