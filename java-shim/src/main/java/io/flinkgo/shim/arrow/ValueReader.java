package io.flinkgo.shim.arrow;

import java.lang.reflect.Array;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;

import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;
import org.apache.flink.types.RowUtils;

/**
 * Reads one output column into the Java values of {@link TypeMapping#toTypeInfo}: Boolean,
 * Byte, Short, Integer, Long, Float, Double, String, byte[], BigDecimal, LocalDateTime,
 * Instant, LocalDate, arrays of the element's class, and named Rows. The vector's type has
 * been checked against the expected schema before ({@link SchemaIO#difference}).
 */
abstract class ValueReader {
    abstract Object read(int index);

    static ValueReader create(ColumnType t, FieldVector v) {
        switch (t.kind()) {
            case BOOLEAN: return nullable(v, i -> ((BitVector) v).get(i) != 0);
            case TINYINT: return nullable(v, i -> ((TinyIntVector) v).get(i));
            case SMALLINT: return nullable(v, i -> ((SmallIntVector) v).get(i));
            case INT: return nullable(v, i -> ((IntVector) v).get(i));
            case BIGINT: return nullable(v, i -> ((BigIntVector) v).get(i));
            case FLOAT: return nullable(v, i -> ((Float4Vector) v).get(i));
            case DOUBLE: return nullable(v, i -> ((Float8Vector) v).get(i));
            case STRING: return new StringReader((VarCharVector) v);
            case BYTES: return nullable(v, i -> ((VarBinaryVector) v).get(i));
            case DECIMAL: return nullable(v, i -> ((DecimalVector) v).getObject(i));
            case DATE: return nullable(v, i -> LocalDate.ofEpochDay(((DateDayVector) v).get(i)));
            case TIMESTAMP: return nullable(v, i -> localDateTime(((TimeStampVector) v).get(i)));
            case TIMESTAMP_LTZ: return nullable(v, i -> instant(((TimeStampVector) v).get(i)));
            case ARRAY: return new ArrayReader(t, (ListVector) v);
            case ROW: return new RowReader(t, (StructVector) v);
            default: throw new IllegalStateException("unhandled kind " + t.kind());
        }
    }

    /** A TIMESTAMP value: microseconds since the epoch, read as UTC wall-clock time. */
    static LocalDateTime localDateTime(long us) {
        return LocalDateTime.ofEpochSecond(Math.floorDiv(us, 1_000_000L), (int) Math.floorMod(us, 1_000_000L) * 1000,
                ZoneOffset.UTC);
    }

    /** A TIMESTAMP_LTZ value: microseconds since the epoch. */
    static Instant instant(long us) {
        return Instant.ofEpochSecond(Math.floorDiv(us, 1_000_000L), Math.floorMod(us, 1_000_000L) * 1000);
    }

    private interface NonNull {
        Object get(int index);
    }

    private static ValueReader nullable(FieldVector v, NonNull f) {
        return new ValueReader() {
            @Override
            Object read(int index) {
                return v.isNull(index) ? null : f.get(index);
            }
        };
    }

    /**
     * Decodes a string straight from the vector's data buffer through a scratch array that
     * grows as needed: {@code VarCharVector.get} would copy the bytes into a new array first.
     */
    private static final class StringReader extends ValueReader {
        private final VarCharVector vector;
        private byte[] scratch = new byte[256];

        StringReader(VarCharVector vector) {
            this.vector = vector;
        }

        @Override
        Object read(int index) {
            if (vector.isNull(index)) {
                return null;
            }
            ArrowBuf offsets = vector.getOffsetBuffer();
            int start = offsets.getInt((long) index * BaseVariableWidthVector.OFFSET_WIDTH);
            int len = offsets.getInt((long) (index + 1) * BaseVariableWidthVector.OFFSET_WIDTH) - start;
            if (len > scratch.length) {
                scratch = new byte[Math.max(len, 2 * scratch.length)];
            }
            vector.getDataBuffer().getBytes(start, scratch, 0, len);
            return new String(scratch, 0, len, StandardCharsets.UTF_8);
        }
    }

    private static final class ArrayReader extends ValueReader {
        private final ListVector vector;
        private final ValueReader element;
        private final Class<?> componentClass;

        ArrayReader(ColumnType t, ListVector vector) {
            this.vector = vector;
            this.element = create(t.element(), vector.getDataVector());
            // Arrays have the element's class (String[], Row[], ...) so that user code and
            // Flink's array serializer see the type the TypeInformation promises.
            this.componentClass = TypeMapping.toTypeInfo(t.element()).getTypeClass();
        }

        @Override
        Object read(int index) {
            if (vector.isNull(index)) {
                return null;
            }
            int start = vector.getElementStartIndex(index);
            int end = vector.getElementEndIndex(index);
            Object a = Array.newInstance(componentClass, end - start);
            for (int j = start; j < end; j++) {
                Array.set(a, j - start, element.read(j));
            }
            return a;
        }
    }

    static final class RowReader extends ValueReader {
        private final StructVector vector;
        private final ValueReader[] children;
        private final LinkedHashMap<String, Integer> positions;

        RowReader(ColumnType t, StructVector vector) {
            this.vector = vector;
            this.children = new ValueReader[t.fieldNames().size()];
            for (int i = 0; i < children.length; i++) {
                children[i] = create(t.fieldTypes().get(i), (FieldVector) vector.getChildByOrdinal(i));
            }
            this.positions = positions(t);
        }

        @Override
        Object read(int index) {
            if (vector.isNull(index)) {
                return null;
            }
            Object[] values = new Object[children.length];
            for (int i = 0; i < values.length; i++) {
                values[i] = children[i].read(index);
            }
            return RowUtils.createRowWithNamedPositions(RowKind.INSERT, values, positions);
        }
    }

    /** Name → position of a ROW, so that {@code row.getField("name")} works on output rows. */
    static LinkedHashMap<String, Integer> positions(ColumnType row) {
        LinkedHashMap<String, Integer> m = new LinkedHashMap<>();
        for (int i = 0; i < row.fieldNames().size(); i++) {
            m.put(row.fieldNames().get(i), i);
        }
        return m;
    }

    static Row newRow(Object[] values, LinkedHashMap<String, Integer> positions) {
        return RowUtils.createRowWithNamedPositions(RowKind.INSERT, values, positions);
    }
}
