package io.flinkgo.shim.arrow;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.util.Arrays;

import org.apache.arrow.flatbuf.Buffer;
import org.apache.arrow.flatbuf.FieldNode;
import org.apache.arrow.flatbuf.RecordBatch;

import io.flinkgo.shim.wire.ErrorCode;
import io.flinkgo.shim.wire.ProtocolException;

/**
 * Reads the top-level columns of an OUTPUT record batch whose type has no children (every
 * type but ARRAY and ROW) straight from the frame's payload, a heap array, into Java values:
 * the same values {@link ValueReader} gives from Arrow vectors.
 *
 * <p>Design note: loading a batch into vectors copied its body into direct memory, and each
 * string was then copied out again into a scratch array before {@code new String} copied it a
 * third time; here the String is made from the payload itself. Every buffer is checked before
 * a row is read (it lies inside the body and is long enough for the batch's rows; offsets rise
 * and stay inside their data), so a damaged batch is refused whole, as a protocol error.
 */
final class HeapColumns {
    private HeapColumns() {}

    private static final VarHandle I16 = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle I32 = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle I64 = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    /** Whether a column of type {@code t} is read here (else from vectors). */
    static boolean supports(ColumnType t) {
        return t.kind() != ColumnType.Kind.ARRAY && t.kind() != ColumnType.Kind.ROW;
    }

    /** The record batch's field nodes for a field of type {@code t}, its children's included. */
    static int nodes(ColumnType t) {
        switch (t.kind()) {
            case ARRAY: return 1 + nodes(t.element());
            case ROW: return 1 + t.fieldTypes().stream().mapToInt(HeapColumns::nodes).sum();
            default: return 1;
        }
    }

    /** The record batch's buffers for a field of type {@code t}, its children's included. */
    static int buffers(ColumnType t) {
        switch (t.kind()) {
            case STRING:
            case BYTES: return 3; // validity, offsets, data
            case ARRAY: return 2 + buffers(t.element());
            case ROW: return 1 + t.fieldTypes().stream().mapToInt(HeapColumns::buffers).sum();
            default: return 2; // validity, data
        }
    }

    /** The reader for a column of type {@code t}; {@link #supports} must be true. */
    static Column create(ColumnType t, String name) {
        switch (t.kind()) {
            case BOOLEAN: return new Column(name, -1) {
                @Override Object value(int i) { return (b[data + (i >>> 3)] & (1 << (i & 7))) != 0; }
            };
            case TINYINT: return new Column(name, 1) {
                @Override Object value(int i) { return b[data + i]; }
            };
            case SMALLINT: return new Column(name, 2) {
                @Override Object value(int i) { return (short) I16.get(b, data + 2 * i); }
            };
            case INT: return new Column(name, 4) {
                @Override Object value(int i) { return (int) I32.get(b, data + 4 * i); }
            };
            case BIGINT: return new Column(name, 8) {
                @Override Object value(int i) { return (long) I64.get(b, data + 8 * i); }
            };
            case FLOAT: return new Column(name, 4) {
                @Override Object value(int i) { return Float.intBitsToFloat((int) I32.get(b, data + 4 * i)); }
            };
            case DOUBLE: return new Column(name, 8) {
                @Override Object value(int i) { return Double.longBitsToDouble((long) I64.get(b, data + 8 * i)); }
            };
            case DATE: return new Column(name, 4) {
                @Override Object value(int i) { return LocalDate.ofEpochDay((int) I32.get(b, data + 4 * i)); }
            };
            case TIMESTAMP: return new Column(name, 8) {
                @Override Object value(int i) { return ValueReader.localDateTime((long) I64.get(b, data + 8 * i)); }
            };
            case TIMESTAMP_LTZ: return new Column(name, 8) {
                @Override Object value(int i) { return ValueReader.instant((long) I64.get(b, data + 8 * i)); }
            };
            case DECIMAL: {
                int scale = t.scale();
                return new Column(name, 16) {
                    @Override Object value(int i) {
                        // Little-endian two's complement on the wire; BigInteger wants big-endian.
                        byte[] be = new byte[16];
                        int p = data + 16 * i;
                        for (int k = 0; k < 16; k++) {
                            be[k] = b[p + 15 - k];
                        }
                        return new BigDecimal(new BigInteger(be), scale);
                    }
                };
            }
            case STRING: return new VarColumn(name) {
                @Override Object value(int i) {
                    int s = start(i);
                    return new String(b, data + s, start(i + 1) - s, StandardCharsets.UTF_8);
                }
            };
            case BYTES: return new VarColumn(name) {
                @Override Object value(int i) {
                    return Arrays.copyOfRange(b, data + start(i), data + start(i + 1));
                }
            };
            default: throw new IllegalStateException("not a heap column: " + t);
        }
    }

    /**
     * One column over the current batch. {@link #bind} points it at the batch's buffers (and
     * checks them); {@link #read} then gives row i's value, null for a null.
     */
    abstract static class Column {
        final String name;
        private final int width; // bytes per value; -1: one bit
        byte[] b;
        int data; // start of the data buffer in b
        private int validity; // start of the validity bitmap in b, -1: none (see allNull)
        private boolean allNull; // no bitmap, and every value is null

        Column(String name, int width) {
            this.name = name;
            this.width = width;
        }

        abstract Object value(int i);

        final Object read(int i) {
            if (validity >= 0 ? (b[validity + (i >>> 3)] & (1 << (i & 7))) == 0 : allNull) {
                return null;
            }
            return value(i);
        }

        /**
         * Points this column at its buffers in the record batch: node {@code node}, buffers from
         * {@code buffer} on, the body starting at {@code body} in {@code payload}. The caller has
         * checked that every buffer of the batch lies inside the body.
         */
        void bind(byte[] payload, int body, RecordBatch rb, int node, int buffer, int rows) throws ProtocolException {
            FieldNode fn = rb.nodes(node);
            if (fn.length() != rows) {
                throw bad("has " + fn.length() + " rows, the batch " + rows);
            }
            if (fn.nullCount() < 0 || fn.nullCount() > rows) {
                throw bad("claims " + fn.nullCount() + " nulls in " + rows + " rows");
            }
            b = payload;
            int bitmapBytes = (rows + 7) >>> 3;
            // As Arrow Java loads it: a bitmap that is there counts, whatever the null count says;
            // one left out means no null (null count 0) or all null (null count = rows).
            allNull = false;
            if (rb.buffers(buffer).length() > 0) {
                validity = buffer(rb, buffer, body, bitmapBytes, "validity bitmap");
            } else if (fn.nullCount() == 0 || fn.nullCount() == rows) {
                validity = -1;
                allNull = fn.nullCount() > 0;
            } else {
                throw bad("has " + fn.nullCount() + " nulls in " + rows + " rows but no validity bitmap");
            }
            bindData(rb, buffer + 1, body, rows, bitmapBytes);
        }

        /** Drops the reference to the payload (until the next {@link #bind}). */
        final void unbind() {
            b = null;
        }

        void bindData(RecordBatch rb, int buffer, int body, int rows, int bitmapBytes) throws ProtocolException {
            long need = width < 0 ? bitmapBytes : (long) rows * width;
            data = buffer(rb, buffer, body, need, "data buffer");
        }

        /** Start of buffer {@code index} in the payload, after checking it holds {@code need} bytes. */
        int buffer(RecordBatch rb, int index, int body, long need, String what) throws ProtocolException {
            Buffer buf = rb.buffers(index);
            if (buf.length() < need) {
                throw bad(what + " has " + buf.length() + " bytes, " + need + " needed");
            }
            return body + (int) buf.offset();
        }

        ProtocolException bad(String what) {
            return new ProtocolException(ErrorCode.MALFORMED_FRAME, "OUTPUT: column '" + name + "': " + what);
        }
    }

    /** STRING and BYTES: int32 offsets, then the data they point into. */
    abstract static class VarColumn extends Column {
        private int offsets; // start of the offsets buffer in b

        VarColumn(String name) {
            super(name, 0);
        }

        final int start(int i) {
            return (int) I32.get(b, offsets + 4 * i);
        }

        @Override
        void bindData(RecordBatch rb, int buffer, int body, int rows, int bitmapBytes) throws ProtocolException {
            offsets = rows == 0 ? 0 : buffer(rb, buffer, body, 4L * (rows + 1), "offsets buffer");
            data = buffer(rb, buffer + 1, body, 0, "data buffer");
            int dataLen = (int) rb.buffers(buffer + 1).length(); // inside the body: an int
            if (rows == 0) {
                return;
            }
            int prev = start(0);
            if (prev < 0) {
                throw bad("the first offset is " + prev);
            }
            for (int i = 1; i <= rows; i++) {
                int s = start(i);
                if (s < prev) {
                    throw bad("offset " + i + " (" + s + ") is below offset " + (i - 1) + " (" + prev + ")");
                }
                prev = s;
            }
            if (prev > dataLen) {
                throw bad("the last offset (" + prev + ") runs past the " + dataLen + "-byte data buffer");
            }
        }
    }
}
