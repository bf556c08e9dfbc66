package io.flinkgo.shim.arrow;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.List;

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

/**
 * Writes Java values of one input field into its Arrow vector. Built once per vector tree and
 * reused for every batch. Task thread only.
 *
 * <p>Values must have the Java class of the field's {@code TypeInformation}; anything else is
 * an {@link IllegalArgumentException} naming the field path (never a silent conversion).
 */
abstract class ValueWriter {
    final TypeMapping.InputField field;

    ValueWriter(TypeMapping.InputField field) {
        this.field = field;
    }

    /** Writes {@code value} (possibly null) at {@code index}; returns the approximate bytes added. */
    final int write(int index, Object value) {
        if (value == null) {
            writeNull(index);
            return 1;
        }
        try {
            return writeValue(index, value);
        } catch (ClassCastException e) {
            throw new IllegalArgumentException(
                    "field '" + field.path + "' (" + field.type + ") holds a " + value.getClass().getName()
                            + ", which does not match its declared type", e);
        }
    }

    abstract int writeValue(int index, Object value);

    abstract void writeNull(int index);

    /** Called before the batch's {@code setValueCount(rows)}. */
    void finish(int rows) {}

    /** Called after the vector's {@code reset}, when a new batch starts. */
    void reset() {}

    /**
     * The writer for a top-level column, written at rows 0, 1, 2, ... of a batch: STRING and
     * BYTES through a {@link VarWidthAppender}, everything else as {@link #create}.
     */
    static ValueWriter createTopLevel(TypeMapping.InputField f, FieldVector v) {
        switch (f.type.kind()) {
            case STRING:
            case BYTES:
                VarWidthAppender a = new VarWidthAppender((BaseVariableWidthVector) v);
                boolean string = f.type.kind() == ColumnType.Kind.STRING;
                return new ValueWriter(f) {
                    @Override int writeValue(int i, Object o) {
                        byte[] b;
                        if (string) {
                            b = AsciiStrings.bytes((String) o);
                            if (b == null) {
                                b = ((String) o).getBytes(StandardCharsets.UTF_8);
                            }
                        } else {
                            b = (byte[]) o;
                        }
                        a.append(i, b, 0, b.length);
                        return b.length + 5;
                    }
                    @Override void writeNull(int i) { a.appendNull(i); }
                    @Override void finish(int rows) { a.finish(rows); }
                    @Override void reset() { a.reset(); }
                };
            case INT:
                return new TopLevelFixed(f, v, 4) {
                    @Override void setAt(int i, Object o) { ((IntVector) v).set(i, (Integer) o); }
                };
            case BIGINT:
                return new TopLevelFixed(f, v, 8) {
                    @Override void setAt(int i, Object o) { ((BigIntVector) v).set(i, (Long) o); }
                };
            case FLOAT:
                return new TopLevelFixed(f, v, 4) {
                    @Override void setAt(int i, Object o) { ((Float4Vector) v).set(i, (Float) o); }
                };
            case DOUBLE:
                return new TopLevelFixed(f, v, 8) {
                    @Override void setAt(int i, Object o) { ((Float8Vector) v).set(i, (Double) o); }
                };
            default:
                return create(f, v);
        }
    }

    /**
     * A top-level INT, BIGINT, FLOAT or DOUBLE column: the unchecked {@code set} below the
     * capacity {@link FixedCapacity} keeps, instead of {@code setSafe}.
     */
    private abstract static class TopLevelFixed extends Fixed {
        private final FixedCapacity capacity;

        TopLevelFixed(TypeMapping.InputField f, FieldVector v, int width) {
            super(f, v, width);
            this.capacity = new FixedCapacity((org.apache.arrow.vector.BaseFixedWidthVector) v);
        }

        abstract void setAt(int index, Object value);

        @Override
        void set(int index, Object value) {
            capacity.ensure(index);
            setAt(index, value);
        }

        @Override
        void reset() {
            capacity.reset();
        }
    }

    IllegalArgumentException bad(String what) {
        return new IllegalArgumentException("field '" + field.path + "' (" + field.type + "): " + what);
    }

    /** The writer for a field and its vector (children are created recursively). */
    static ValueWriter create(TypeMapping.InputField f, FieldVector v) {
        switch (f.type.kind()) {
            case BOOLEAN: return new Fixed(f, v, 1) {
                @Override void set(int i, Object o) { ((BitVector) v).setSafe(i, ((Boolean) o) ? 1 : 0); }
            };
            case TINYINT: return new Fixed(f, v, 1) {
                @Override void set(int i, Object o) { ((TinyIntVector) v).setSafe(i, (Byte) o); }
            };
            case SMALLINT: return new Fixed(f, v, 2) {
                @Override void set(int i, Object o) { ((SmallIntVector) v).setSafe(i, (Short) o); }
            };
            case INT: return new Fixed(f, v, 4) {
                @Override void set(int i, Object o) { ((IntVector) v).setSafe(i, (Integer) o); }
            };
            case BIGINT: return new Fixed(f, v, 8) {
                @Override void set(int i, Object o) { ((BigIntVector) v).setSafe(i, (Long) o); }
            };
            case FLOAT: return new Fixed(f, v, 4) {
                @Override void set(int i, Object o) { ((Float4Vector) v).setSafe(i, (Float) o); }
            };
            case DOUBLE: return new Fixed(f, v, 8) {
                @Override void set(int i, Object o) { ((Float8Vector) v).setSafe(i, (Double) o); }
            };
            case DATE: return new Fixed(f, v, 4) {
                @Override void set(int i, Object o) {
                    long day = ((LocalDate) o).toEpochDay();
                    if (day != (int) day) {
                        throw bad("date " + o + " is outside the date32 range");
                    }
                    ((DateDayVector) v).setSafe(i, (int) day);
                }
            };
            case TIMESTAMP: return new Fixed(f, v, 8) {
                @Override void set(int i, Object o) {
                    LocalDateTime t = (LocalDateTime) o;
                    ((TimeStampVector) v).setSafe(i, micros(t.toEpochSecond(ZoneOffset.UTC), t.getNano()));
                }
            };
            case TIMESTAMP_LTZ: return new Fixed(f, v, 8) {
                @Override void set(int i, Object o) {
                    Instant t = (Instant) o;
                    ((TimeStampVector) v).setSafe(i, micros(t.getEpochSecond(), t.getNano()));
                }
            };
            case DECIMAL: return new Fixed(f, v, 16) {
                @Override void set(int i, Object o) { ((DecimalVector) v).setSafe(i, fitDecimal((BigDecimal) o)); }
            };
            case STRING: return new ValueWriter(f) {
                @Override int writeValue(int i, Object o) {
                    byte[] b = AsciiStrings.bytes((String) o);
                    if (b == null) {
                        b = ((String) o).getBytes(StandardCharsets.UTF_8);
                    }
                    ((VarCharVector) v).setSafe(i, b);
                    return b.length + 5;
                }
                @Override void writeNull(int i) { ((VarCharVector) v).setNull(i); }
            };
            case BYTES: return new ValueWriter(f) {
                @Override int writeValue(int i, Object o) {
                    byte[] b = (byte[]) o;
                    ((VarBinaryVector) v).setSafe(i, b);
                    return b.length + 5;
                }
                @Override void writeNull(int i) { ((VarBinaryVector) v).setNull(i); }
            };
            case ARRAY: return new ArrayWriter(f, (ListVector) v);
            case ROW: return new RowWriter(f, (StructVector) v);
            default: throw new IllegalStateException("unhandled kind " + f.type.kind());
        }
    }

    // Sub-microsecond digits are truncated: the wire carries microseconds (protocol.md).
    static long micros(long epochSecond, int nano) {
        return Math.addExact(Math.multiplyExact(epochSecond, 1_000_000L), nano / 1000);
    }

    /** A fixed-width value: {@link #set} writes it, {@code width} is its size in bytes. */
    private abstract static class Fixed extends ValueWriter {
        private final FieldVector vector;
        private final int width;

        Fixed(TypeMapping.InputField f, FieldVector vector, int width) {
            super(f);
            this.vector = vector;
            this.width = width;
        }

        abstract void set(int index, Object value);

        @Override
        int writeValue(int index, Object value) {
            set(index, value);
            return width + 1;
        }

        @Override
        void writeNull(int index) {
            ((org.apache.arrow.vector.BaseFixedWidthVector) vector).setNull(index);
        }

        BigDecimal fitDecimal(BigDecimal d) {
            BigDecimal scaled;
            try {
                scaled = d.setScale(field.type.scale(), RoundingMode.UNNECESSARY);
            } catch (ArithmeticException e) {
                throw bad("value " + d + " has more than " + field.type.scale() + " fractional digits (it is never rounded)");
            }
            if (scaled.precision() > field.type.precision()) {
                throw bad("value " + d + " needs more than " + field.type.precision() + " digits");
            }
            return scaled;
        }
    }

    /** ARRAY: a Java array or a java.util.List. */
    private static final class ArrayWriter extends ValueWriter {
        private final ListVector vector;
        private final ValueWriter element;

        ArrayWriter(TypeMapping.InputField f, ListVector vector) {
            super(f);
            this.vector = vector;
            this.element = create(f.element, vector.getDataVector());
        }

        @Override
        int writeValue(int index, Object value) {
            int bytes = 4;
            int start = vector.startNewValue(index);
            int n;
            if (value instanceof Object[]) {
                Object[] a = (Object[]) value;
                n = a.length;
                for (int j = 0; j < n; j++) {
                    bytes += element.write(start + j, a[j]);
                }
            } else if (value instanceof List) {
                List<?> l = (List<?>) value;
                n = l.size();
                int j = 0;
                for (Object o : l) {
                    bytes += element.write(start + j++, o);
                }
            } else {
                throw new ClassCastException(value.getClass().getName());
            }
            vector.endValue(index, n);
            return bytes;
        }

        @Override
        void writeNull(int index) {
            vector.setNull(index);
        }
    }

    /** ROW: a Row or a POJO; fields read with the getters from {@link TypeMapping}. */
    private static final class RowWriter extends ValueWriter {
        private final StructVector vector;
        private final ValueWriter[] children;

        RowWriter(TypeMapping.InputField f, StructVector vector) {
            super(f);
            this.vector = vector;
            this.children = new ValueWriter[f.children.size()];
            for (int i = 0; i < children.length; i++) {
                TypeMapping.InputField c = f.children.get(i);
                children[i] = create(c, (FieldVector) vector.getChild(c.name));
            }
        }

        @Override
        int writeValue(int index, Object value) {
            vector.setIndexDefined(index);
            int bytes = 1;
            for (ValueWriter c : children) {
                bytes += c.write(index, c.field.getter.get(value));
            }
            return bytes;
        }

        @Override
        void writeNull(int index) {
            vector.setNull(index);
            for (ValueWriter c : children) {
                c.writeNull(index);
            }
        }
    }
}
