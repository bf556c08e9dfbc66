package io.flinkgo.shim.arrow;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.channels.Channels;
import java.util.Arrays;
import java.util.LinkedHashMap;

import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ReadChannel;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.MessageMetadataResult;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
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
    // Kept between payloads while the schema message stays the same (see read).
    private byte[] lastSchema;
    private VectorSchemaRoot root;
    private VectorLoader loader;
    private BigIntVector ts;
    private ValueReader[] columns;

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
     * <p>Every payload is a whole IPC stream, schema first. The schema message is compared
     * byte-wise with the previous payload's; only a different one is parsed and checked, and the
     * vectors (and their readers) are kept between payloads, so a steady stream of OUTPUT frames
     * costs one record batch load each.
     *
     * @return the number of rows
     */
    public int read(byte[] ipcStream, RowSink sink) throws Exception {
        ReadChannel in = new ReadChannel(Channels.newChannel(new ByteArrayInputStream(ipcStream)));
        MessageMetadataResult sm;
        try {
            sm = MessageSerializer.readMessage(in);
        } catch (IOException | RuntimeException e) {
            throw malformed("not an Arrow IPC stream: " + e, e);
        }
        if (sm == null || sm.getMessage().headerType() != MessageHeader.Schema) {
            throw malformed("the stream does not start with a schema message", null);
        }
        int schemaEnd = (int) in.bytesRead();
        if (root == null || !Arrays.equals(ipcStream, 0, schemaEnd, lastSchema, 0, lastSchema.length)) {
            Schema announced;
            try {
                announced = MessageSerializer.deserializeSchema(sm.getMessage());
            } catch (RuntimeException e) {
                throw malformed("bad schema message: " + e, e);
            }
            checkSchema(announced);
            useSchema(announced);
            lastSchema = Arrays.copyOf(ipcStream, schemaEnd);
        }
        int total = 0;
        try {
            while (true) {
                MessageMetadataResult m;
                try {
                    m = MessageSerializer.readMessage(in);
                } catch (IOException | RuntimeException e) {
                    throw malformed("bad message after " + total + " rows: " + e, e);
                }
                if (m == null) {
                    break; // end of stream
                }
                if (m.getMessage().headerType() != MessageHeader.RecordBatch) {
                    throw malformed("expected a record batch message, got header type " + m.getMessage().headerType(), null);
                }
                try {
                    // deserializeRecordBatch takes over the body's reference (it releases it once the
                    // batch holds its slices); closing the batch releases those.
                    ArrowBuf body = MessageSerializer.readMessageBody(in, m.getMessageBodyLength(), allocator);
                    try (ArrowRecordBatch rb = MessageSerializer.deserializeRecordBatch(m.getMessage(), body)) {
                        loader.load(rb);
                    }
                } catch (IOException | RuntimeException e) {
                    throw malformed("bad record batch: " + e, e);
                }
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
            if (in.bytesRead() != ipcStream.length) {
                throw malformed((ipcStream.length - in.bytesRead()) + " bytes after the end-of-stream marker", null);
            }
        } finally {
            root.clear(); // the batch's buffers go back now, not at the next frame
        }
        return total;
    }

    /** (Re)creates the vectors and readers for a schema that passed {@link #checkSchema}. */
    private void useSchema(Schema s) {
        if (root != null) {
            root.close();
        }
        root = VectorSchemaRoot.create(s, allocator);
        loader = new VectorLoader(root);
        ts = (BigIntVector) root.getVector(0);
        columns = new ValueReader[rowType.fieldNames().size()];
        for (int i = 0; i < columns.length; i++) {
            columns[i] = ValueReader.create(rowType.fieldTypes().get(i), (FieldVector) root.getVector(i + 1));
        }
    }

    private static ProtocolException malformed(String what, Throwable cause) {
        return new ProtocolException(ErrorCode.MALFORMED_FRAME, "OUTPUT: " + what, cause);
    }

    @Override
    public void close() {
        if (root != null) {
            root.close();
            root = null;
        }
        allocator.close();
    }
}
