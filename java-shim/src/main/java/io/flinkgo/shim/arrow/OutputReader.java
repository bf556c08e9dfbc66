package io.flinkgo.shim.arrow;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;

import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
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
    private ValueReader[] columns;
    // Columns read straight from the payload (HeapColumns), null where a column is read from the
    // vectors; where each column's field nodes and buffers start in a record batch.
    private final HeapColumns.Column heapTs;
    private final HeapColumns.Column[] heap;
    private final boolean needVectors;
    private final int[] firstNode;
    private final int[] firstBuffer;
    private final int nodes;
    private final int buffers;

    public OutputReader(BufferAllocator parent, long limit, ColumnType rowType) {
        this(parent, limit, rowType, true);
    }

    /** @param heapColumns false reads every column from Arrow vectors (for tests that compare both) */
    OutputReader(BufferAllocator parent, long limit, ColumnType rowType, boolean heapColumns) {
        this.allocator = parent.newChildAllocator("flinkgo-output-reader", 0, limit);
        this.rowType = rowType;
        this.schema = outputSchema(rowType);
        this.positions = ValueReader.positions(rowType);
        List<ColumnType> types = rowType.fieldTypes();
        ColumnType tsType = ColumnType.of(ColumnType.Kind.BIGINT);
        this.heapTs = HeapColumns.create(tsType, BatchWriter.TS);
        this.heap = new HeapColumns.Column[types.size()];
        this.firstNode = new int[types.size()];
        this.firstBuffer = new int[types.size()];
        int node = HeapColumns.nodes(tsType);
        int buffer = HeapColumns.buffers(tsType);
        boolean vectors = false;
        for (int i = 0; i < heap.length; i++) {
            ColumnType t = types.get(i);
            firstNode[i] = node;
            firstBuffer[i] = buffer;
            node += HeapColumns.nodes(t);
            buffer += HeapColumns.buffers(t);
            if (heapColumns && HeapColumns.supports(t)) {
                heap[i] = HeapColumns.create(t, rowType.fieldNames().get(i));
            } else {
                vectors = true;
            }
        }
        this.nodes = node;
        this.buffers = buffer;
        this.needVectors = vectors || !heapColumns;
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
        return read(ipcStream, ipcStream.length, sink);
    }

    /**
     * Decodes the OUTPUT payload in the first {@code length} bytes of {@code ipcStream} (a pooled
     * array may be longer; nothing past {@code length} is read), as {@link #read(byte[],
     * RowSink)} does. No value handed to {@code sink} refers to the array, so it may be reused
     * as soon as this returns.
     */
    public int read(byte[] ipcStream, int length, RowSink sink) throws Exception {
        if (length < 0 || length > ipcStream.length) {
            throw new IllegalArgumentException("payload length " + length + " outside its " + ipcStream.length + "-byte array");
        }
        Msg sm = nextMessage(ipcStream, length, 0);
        if (sm.message == null || sm.message.headerType() != MessageHeader.Schema) {
            throw malformed("the stream does not start with a schema message", null);
        }
        int schemaEnd = sm.end;
        if (root == null || !Arrays.equals(ipcStream, 0, schemaEnd, lastSchema, 0, lastSchema.length)) {
            Schema announced;
            try {
                announced = MessageSerializer.deserializeSchema(sm.message);
            } catch (RuntimeException e) {
                throw malformed("bad schema message: " + e, e);
            }
            checkSchema(announced);
            useSchema(announced);
            lastSchema = Arrays.copyOf(ipcStream, schemaEnd);
        }
        int total = 0;
        int pos = schemaEnd;
        try {
            while (true) {
                Msg m = nextMessage(ipcStream, length, pos);
                pos = m.end;
                if (m.message == null) {
                    break; // end of stream
                }
                if (m.message.headerType() != MessageHeader.RecordBatch) {
                    throw malformed("expected a record batch message, got header type " + m.message.headerType(), null);
                }
                int n = bindHeap(ipcStream, m);
                if (needVectors) {
                    load(ipcStream, m);
                    if (root.getRowCount() != n) {
                        throw malformed("the record batch loads " + root.getRowCount() + " rows, its header says " + n, null);
                    }
                }
                HeapColumns.Column[] heap = this.heap;
                for (int row = 0; row < n; row++) {
                    Object[] values = new Object[heap.length];
                    Long t;
                    try {
                        for (int c = 0; c < values.length; c++) {
                            HeapColumns.Column h = heap[c];
                            values[c] = h != null ? h.read(row) : columns[c].read(row);
                        }
                        t = (Long) heapTs.read(row);
                    } catch (RuntimeException e) {
                        // Reads are bounds-checked: damaged offsets or lengths end up here.
                        throw malformed("row " + row + " of a record batch does not decode: " + e, e);
                    }
                    sink.accept(t, ValueReader.newRow(values, positions)); // the sink's exceptions pass as they are
                }
                total += n;
            }
            if (pos != length) {
                throw malformed((length - pos) + " bytes after the end-of-stream marker", null);
            }
        } finally {
            if (needVectors) {
                root.clear(); // the batch's buffers go back now, not at the next frame
            }
            heapTs.unbind(); // nor is the payload kept until the next frame
            for (HeapColumns.Column h : heap) {
                if (h != null) {
                    h.unbind();
                }
            }
        }
        return total;
    }

    /**
     * Checks the record batch message's layout (no compression, one field node and the buffers
     * of every field) and points the heap columns at their buffers, checking them.
     *
     * @return the batch's row count
     */
    private int bindHeap(byte[] ipcStream, Msg m) throws ProtocolException {
        RecordBatch rb;
        try {
            rb = (RecordBatch) m.message.header(new RecordBatch());
            if (rb == null) {
                throw malformed("the record batch message has no header", null);
            }
            if (rb.compression() != null) {
                throw malformed("the record batch is compressed; protocol version 1 sends bodies uncompressed", null);
            }
            long n = rb.length();
            if (n < 0 || n > Integer.MAX_VALUE - 1) {
                throw malformed("the record batch claims " + n + " rows", null);
            }
            if (rb.nodesLength() != nodes || rb.buffersLength() != buffers) {
                throw malformed("the record batch has " + rb.nodesLength() + " field nodes and " + rb.buffersLength()
                        + " buffers; its schema needs " + nodes + " and " + buffers, null);
            }
            for (int i = 0; i < buffers; i++) { // unused ones too (a validity bitmap without nulls)
                org.apache.arrow.flatbuf.Buffer b = rb.buffers(i);
                if (b.offset() < 0 || b.length() < 0 || b.offset() > m.bodyLength || b.length() > m.bodyLength - b.offset()) {
                    throw malformed("buffer " + i + " at " + b.offset() + " (" + b.length() + " bytes) lies outside the "
                            + m.bodyLength + "-byte body", null);
                }
            }
            int rows = (int) n;
            heapTs.bind(ipcStream, m.bodyStart, rb, 0, 0, rows);
            for (int c = 0; c < heap.length; c++) {
                if (heap[c] != null) {
                    heap[c].bind(ipcStream, m.bodyStart, rb, firstNode[c], firstBuffer[c], rows);
                }
            }
            return rows;
        } catch (RuntimeException e) {
            // The flatbuffer is read lazily: a damaged one fails here, bounds-checked.
            throw malformed("bad record batch header: " + e, e);
        }
    }

    /** Loads the record batch message {@code m} into the vectors, copying its body once. */
    private void load(byte[] ipcStream, Msg m) throws ProtocolException {
        ArrowBuf body;
        try {
            body = allocator.buffer(m.bodyLength);
        } catch (RuntimeException e) {
            throw malformed("a record batch body of " + m.bodyLength + " bytes does not fit the reader's memory: " + e, e);
        }
        ArrowRecordBatch rb;
        try {
            body.setBytes(0, ipcStream, m.bodyStart, m.bodyLength);
            // On success it has taken over the body's reference (released once the batch holds
            // its slices); closing the batch releases those.
            rb = MessageSerializer.deserializeRecordBatch(m.message, body);
        } catch (IOException | RuntimeException e) {
            if (body.refCnt() > 0) {
                body.getReferenceManager().release(body.refCnt());
            }
            throw malformed("bad record batch: " + e, e);
        }
        try (rb) {
            loader.load(rb);
        } catch (RuntimeException | AssertionError e) {
            // With assertions on (-ea), Arrow asserts on some damaged offsets while loading.
            throw malformed("bad record batch: " + e, e);
        }
    }

    /** One encapsulated IPC message read in place: null message = end-of-stream marker. */
    private record Msg(Message message, int bodyStart, int bodyLength, int end) {}

    /**
     * Reads the encapsulated message at {@code pos} of {@code b} (continuation marker, metadata
     * length, flatbuffer metadata, body) without copying it, checking that it lies inside the
     * first {@code limit} bytes of {@code b}.
     */
    private static Msg nextMessage(byte[] b, int limit, int pos) throws ProtocolException {
        ByteBuffer bb = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
        if (pos + 4 > limit) {
            throw malformed("the stream ends at byte " + limit + " inside a message header (or before its end-of-stream marker)", null);
        }
        int len = bb.getInt(pos);
        int p = pos + 4;
        if (len == -1) { // continuation marker, then the length
            if (p + 4 > limit) {
                throw malformed("the stream ends at byte " + limit + " inside a message header", null);
            }
            len = bb.getInt(p);
            p += 4;
        }
        if (len == 0) {
            return new Msg(null, p, 0, p);
        }
        if (len < 0 || len > limit - p) {
            throw malformed("message metadata of " + len + " bytes at byte " + p + " runs past the " + limit
                    + "-byte payload", null);
        }
        Message m;
        long bodyLength;
        try {
            m = Message.getRootAsMessage(ByteBuffer.wrap(b, p, len).slice().order(ByteOrder.LITTLE_ENDIAN));
            bodyLength = m.bodyLength();
            m.headerType();
        } catch (RuntimeException e) {
            throw malformed("bad message metadata at byte " + p + ": " + e, e);
        }
        int bodyStart = p + len;
        if (bodyLength < 0 || bodyLength > limit - bodyStart) {
            throw malformed("message body of " + bodyLength + " bytes at byte " + bodyStart + " runs past the "
                    + limit + "-byte payload", null);
        }
        return new Msg(m, bodyStart, (int) bodyLength, bodyStart + (int) bodyLength);
    }

    /** (Re)creates the vectors and readers for a schema that passed {@link #checkSchema}. */
    private void useSchema(Schema s) {
        if (root != null) {
            root.close();
        }
        root = VectorSchemaRoot.create(s, allocator);
        loader = new VectorLoader(root);
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
