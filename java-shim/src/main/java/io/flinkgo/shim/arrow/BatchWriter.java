package io.flinkgo.shim.arrow;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.WritableByteChannel;
import java.util.ArrayList;
import java.util.List;

import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.ipc.WriteChannel;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.IpcOption;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Builds DATA batches: {@code _key_group} int32, {@code _key} binary, {@code _ts} int64
 * nullable, then the user columns (protocol.md, "Input batch schema").
 *
 * <p>Vectors are created once and reused between batches ({@code reset} keeps their buffers),
 * so steady-state batching allocates nothing. All buffers come from a child allocator with a
 * limit; a batch that would exceed it fails with Arrow's OutOfMemoryException instead of
 * growing the JVM's direct memory without bound. Task thread only.
 */
public final class BatchWriter implements AutoCloseable {
    public static final String KEY_GROUP = "_key_group";
    public static final String KEY = "_key";
    public static final String TS = "_ts";

    private final BufferAllocator allocator;
    private final VectorSchemaRoot root;
    private final IntVector keyGroups;
    private final VarBinaryVector keys;
    private final VarWidthAppender keyAppender;
    private final FixedCapacity keyGroupCapacity;
    private final FixedCapacity timestampCapacity;
    private final BigIntVector timestamps;
    private final ValueWriter[] columns;
    private final List<TypeMapping.InputField> fields;
    private final byte[] schemaBytes;
    private final VectorUnloader unloader;
    private int rows;
    private long bytes;

    /**
     * @param parent the allocator to take a child from
     * @param limit the most bytes the batch vectors may hold
     * @param fields the user columns, from {@link TypeMapping#inputFields}
     */
    public BatchWriter(BufferAllocator parent, long limit, List<TypeMapping.InputField> fields) {
        this.fields = List.copyOf(fields);
        this.allocator = parent.newChildAllocator("flinkgo-batch-writer", 0, limit);
        Schema schema = inputSchema(fields);
        this.schemaBytes = SchemaIO.toBytes(schema);
        this.root = VectorSchemaRoot.create(schema, allocator);
        this.unloader = new VectorUnloader(root);
        this.keyGroups = (IntVector) root.getVector(KEY_GROUP);
        this.keys = (VarBinaryVector) root.getVector(KEY);
        this.keyAppender = new VarWidthAppender(keys);
        this.timestamps = (BigIntVector) root.getVector(TS);
        this.keyGroupCapacity = new FixedCapacity(keyGroups);
        this.timestampCapacity = new FixedCapacity(timestamps);
        this.columns = new ValueWriter[fields.size()];
        for (int i = 0; i < columns.length; i++) {
            columns[i] = ValueWriter.createTopLevel(fields.get(i), root.getVector(i + 3));
        }
    }

    /** The input schema: the three system columns, then the user columns. */
    public static Schema inputSchema(List<TypeMapping.InputField> fields) {
        List<Field> all = new ArrayList<>();
        all.add(new Field(KEY_GROUP, FieldType.notNullable(new ArrowType.Int(32, true)), null));
        all.add(new Field(KEY, FieldType.notNullable(ArrowType.Binary.INSTANCE), null));
        all.add(new Field(TS, FieldType.nullable(new ArrowType.Int(64, true)), null));
        for (TypeMapping.InputField f : fields) {
            all.add(f.type.toArrowField(f.name));
        }
        return new Schema(all);
    }

    /** The input schema as an IPC schema message (OPEN {@code input_schema}). */
    public byte[] schemaBytes() {
        return schemaBytes.clone();
    }

    /**
     * Appends one record.
     *
     * @param hasTimestamp false writes a null {@code _ts}
     * @param record a Row or a POJO of the input type
     * @throws IllegalArgumentException if a value does not fit its column (names the field)
     */
    public void append(int keyGroup, byte[] key, boolean hasTimestamp, long timestamp, Object record) {
        append(keyGroup, key, key.length, hasTimestamp, timestamp, record);
    }

    /** {@link #append(int, byte[], boolean, long, Object)} with the key in {@code key[0, keyLength)}. */
    public void append(int keyGroup, byte[] key, int keyLength, boolean hasTimestamp, long timestamp, Object record) {
        int i = rows;
        keyGroupCapacity.ensure(i);
        keyGroups.set(i, keyGroup);
        keyAppender.append(i, key, 0, keyLength);
        long b = 4 + keyLength + 4 + 9;
        if (hasTimestamp) {
            timestampCapacity.ensure(i);
            timestamps.set(i, timestamp);
        } else {
            timestamps.setNull(i);
        }
        for (ValueWriter w : columns) {
            b += w.write(i, w.field.getter.get(record));
        }
        rows = i + 1;
        bytes += b;
    }

    /** Rows in the current batch. */
    public int rows() {
        return rows;
    }

    /** Approximate encoded bytes of the current batch. */
    public long bytes() {
        return bytes;
    }

    /**
     * Writes the current batch as one Arrow IPC stream (schema, one record batch, end-of-stream)
     * to {@code out} and starts a new, empty batch.
     *
     * @return the number of rows written
     */
    public int finish(OutputStream out) throws IOException {
        int n = encode(new WriteChannel(Channels.newChannel(out)));
        reset();
        return n;
    }

    /**
     * Encodes the current batch as {@link #finish} does, but into {@code parts}: the stream's
     * pieces in order, the vectors' own (direct) buffers among them, not copied. They stay valid
     * until {@link #reset}, which the caller calls once they are sent.
     *
     * <p>Design note: writing the batch to a heap array and that to the socket copied every byte
     * twice more (the array, then the JDK's temporary direct buffer); a gathering write takes
     * the vectors' memory as it is.
     *
     * @return the number of rows encoded
     */
    public int finishGathered(List<ByteBuffer> parts) throws IOException {
        return encode(new WriteChannel(new CollectingChannel(parts)));
    }

    private int encode(WriteChannel ch) throws IOException {
        int n = rows;
        keyAppender.finish(n);
        for (ValueWriter w : columns) {
            w.finish(n);
        }
        root.setRowCount(n);
        // What ArrowStreamWriter writes (schema message, record batch message, end-of-stream
        // marker), without building a writer and serialising the unchanged schema per batch.
        ch.write(schemaBytes);
        try (ArrowRecordBatch rb = unloader.getRecordBatch()) {
            MessageSerializer.serialize(ch, rb);
        }
        ArrowStreamWriter.writeEndOfStream(ch, IpcOption.DEFAULT);
        return n;
    }

    /**
     * A channel that keeps what is written to it, in order: direct buffers (the vectors') as
     * views, heap buffers (message headers, markers, padding: a few bytes each) as copies,
     * because Arrow's writer reuses some of those.
     */
    private static final class CollectingChannel implements WritableByteChannel {
        private final List<ByteBuffer> parts;

        CollectingChannel(List<ByteBuffer> parts) {
            this.parts = parts;
        }

        @Override
        public int write(ByteBuffer src) {
            int n = src.remaining();
            if (n > 0) {
                if (src.isDirect()) {
                    parts.add(src.slice());
                    src.position(src.limit());
                } else {
                    byte[] copy = new byte[n];
                    src.get(copy);
                    parts.add(ByteBuffer.wrap(copy));
                }
            }
            return n;
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public void close() {}
    }

    /** Drops the current batch (after a failure). */
    public void reset() {
        for (FieldVector v : root.getFieldVectors()) {
            clearForReuse(v);
        }
        keyAppender.reset();
        keyGroupCapacity.reset();
        timestampCapacity.reset();
        for (ValueWriter w : columns) {
            w.reset();
        }
        root.setRowCount(0);
        rows = 0;
        bytes = 0;
    }

    /**
     * Empties a top-level vector for the next batch. A fixed-width or variable-width vector only
     * has its validity bitmap zeroed: every row of a batch writes its value slots (and, through
     * {@link VarWidthAppender}, its offset) before the batch is encoded, and the encoder reads
     * nothing past the last row, so the data and offset buffers need not be cleared. Arrow's
     * {@code reset} zeroes all of them; for 4096 rows of 200 bytes that is more than 1 MB of
     * memset per batch, 3.8 % of the driving thread's CPU samples in HopBench. Other vectors
     * (lists, structs, whose children Arrow writes) are reset as Arrow does it.
     */
    static void clearForReuse(FieldVector v) {
        if (v instanceof BaseFixedWidthVector || v instanceof BaseVariableWidthVector) {
            ArrowBuf validity = v.getValidityBuffer();
            validity.setZero(0, validity.capacity());
            v.setValueCount(0);
        } else {
            v.reset();
        }
    }

    /** Bytes currently allocated by the batch vectors. */
    public long allocatedBytes() {
        return allocator.getAllocatedMemory();
    }

    public List<TypeMapping.InputField> fields() {
        return fields;
    }

    @Override
    public void close() {
        root.close();
        allocator.close();
    }
}
