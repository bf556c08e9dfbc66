package io.flinkgo.shim.arrow;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.LinkedHashMap;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.flink.types.Row;

import io.flinkgo.shim.wire.ErrorCode;
import io.flinkgo.shim.wire.ProtocolException;

/**
 * Decodes OUTPUT frames (one Arrow IPC stream each: {@code _ts} int64 nullable, then the
 * agent's columns) into Rows. Every batch's schema is checked against the one derived from
 * the describe manifest; a difference is a {@code bad_schema} protocol error. Task thread only.
 */
public final class OutputReader implements AutoCloseable {
    /** Receives one output row and its timestamp ({@code null} = none). */
    @FunctionalInterface
    public interface RowSink {
        void accept(Long timestamp, Row row) throws Exception;
    }

    private final BufferAllocator allocator;
    private final ColumnType rowType;
    private final Schema schema;
    private final LinkedHashMap<String, Integer> positions;

    public OutputReader(BufferAllocator parent, long limit, ColumnType rowType) {
        this.allocator = parent.newChildAllocator("flinkgo-output-reader", 0, limit);
        this.rowType = rowType;
        this.schema = outputSchema(rowType);
        this.positions = ValueReader.positions(rowType);
    }

    /** {@code _ts} then the user columns of {@code rowType}. */
    public static Schema outputSchema(ColumnType rowType) {
        java.util.List<Field> all = new java.util.ArrayList<>();
        all.add(new Field(BatchWriter.TS, FieldType.nullable(new ArrowType.Int(64, true)), null));
        for (int i = 0; i < rowType.fieldNames().size(); i++) {
            all.add(rowType.fieldTypes().get(i).toArrowField(rowType.fieldNames().get(i)));
        }
        return new Schema(all);
    }

    public Schema schema() {
        return schema;
    }

    /** Checks a schema announced by Go (READY) against the expected one. */
    public void checkSchema(Schema announced) throws ProtocolException {
        String d = SchemaIO.difference(schema, announced);
        if (d != null) {
            throw new ProtocolException(ErrorCode.BAD_SCHEMA,
                    "the Go process's output schema differs from its describe manifest: " + d
                            + "; rebuild the binary or the job so that both agree");
        }
    }

    /**
     * Decodes one OUTPUT payload and hands each row to {@code sink}, in order.
     *
     * @return the number of rows
     */
    public int read(byte[] ipcStream, RowSink sink) throws Exception {
        int total = 0;
        try (ArrowStreamReader r = new ArrowStreamReader(new ByteArrayInputStream(ipcStream), allocator)) {
            VectorSchemaRoot root;
            try {
                root = r.getVectorSchemaRoot();
            } catch (IOException | RuntimeException e) {
                throw new ProtocolException(ErrorCode.MALFORMED_FRAME, "OUTPUT: not an Arrow IPC stream: " + e, e);
            }
            checkSchema(root.getSchema());
            BigIntVector ts = (BigIntVector) root.getVector(0);
            ValueReader[] columns = new ValueReader[rowType.fieldNames().size()];
            for (int i = 0; i < columns.length; i++) {
                columns[i] = ValueReader.create(rowType.fieldTypes().get(i), (FieldVector) root.getVector(i + 1));
            }
            while (r.loadNextBatch()) {
                int n = root.getRowCount();
                for (int row = 0; row < n; row++) {
                    Object[] values = new Object[columns.length];
                    for (int c = 0; c < columns.length; c++) {
                        values[c] = columns[c].read(row);
                    }
                    sink.accept(ts.isNull(row) ? null : ts.get(row), ValueReader.newRow(values, positions));
                }
                total += n;
            }
        }
        return total;
    }

    @Override
    public void close() {
        allocator.close();
    }
}
