package io.flinkgo.shim;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.flink.api.common.operators.MailboxExecutor;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.TaskInfo;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.KeyGroupStatePartitionStreamProvider;
import org.apache.flink.runtime.state.KeyedStateCheckpointOutputStream;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.operators.StreamOperatorParameters;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.tasks.ProcessingTimeService;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;

import io.flinkgo.shim.arrow.BatchWriter;
import io.flinkgo.shim.arrow.KeyBytes;
import io.flinkgo.shim.arrow.OutputReader;
import io.flinkgo.shim.arrow.SchemaIO;
import io.flinkgo.shim.arrow.TypeMapping;
import io.flinkgo.shim.runtime.Channel;
import io.flinkgo.shim.runtime.GoProcessException;
import io.flinkgo.shim.runtime.GoSession;
import io.flinkgo.shim.runtime.RawSections;
import io.flinkgo.shim.runtime.SentRows;
import io.flinkgo.shim.runtime.TaskThreadLocals;
import io.flinkgo.shim.wire.ErrorCode;
import io.flinkgo.shim.wire.Frame;
import io.flinkgo.shim.wire.FrameType;
import io.flinkgo.shim.wire.Frames;
import io.flinkgo.shim.wire.Messages;
import io.flinkgo.shim.wire.PayloadPool;
import io.flinkgo.shim.wire.ProtocolException;

/**
 * Runs a flinkgo agent in a Go process next to this subtask: keyed records go out as Arrow
 * batches, outputs, watermarks and snapshots come back (docs/java-shim.md, docs/protocol.md).
 *
 * <p>Threads: only the task thread touches {@code output}, state, the Arrow batch and the
 * socket's write side. The session's reader thread puts every frame on the inbox queue, in
 * arrival order, and posts a named mail that applies the queue; so "every OUTPUT before
 * SNAPSHOT(n) is emitted before the barrier" and "a watermark is emitted after the outputs
 * acknowledged before it" hold by FIFO order. Waiting for credit is
 * {@code mailboxExecutor.yield()}; waiting for SNAPSHOT or END_ACK ({@link #await}) runs the
 * mailbox's mails and takes frames from the inbox itself, so outputs keep flowing while the
 * operator waits, and a checkpoint still completes when Flink runs it in a quiesced mailbox.
 *
 * <p>Design note: the Go process lives from {@code initializeState} to {@code close}, not to
 * {@code finish}: after {@code finish} Flink can still take a final checkpoint, and its
 * snapshot has to come from Go.
 */
public class GoAgentOperator<IN> extends AbstractStreamOperator<Row>
        implements OneInputStreamOperator<IN, Row>, BoundedOneInput {
    private static final long serialVersionUID = 1L;

    /** Name of the union list state holding every subtask's recovery marker. */
    public static final String MARKER_STATE = "flinkgo-recovery-marker";

    /** Counter metric: bytes of the frames sent to the Go process after READY, headers included. */
    public static final String METRIC_BYTES_TO_GO = "numBytesToGo";

    /** Counter metric: bytes of the frames received from the Go process after READY, headers included. */
    public static final String METRIC_BYTES_FROM_GO = "numBytesFromGo";

    /** Counter metric: output rows that came back by reference (OUTPUT_REF, go.output.by.reference). */
    public static final String METRIC_ROWS_BY_REFERENCE = "numRecordsFromGoByReference";

    // The Go process's own metrics (METRICS frames) are registered by GoMetrics, which names them.

    /**
     * Payload arrays kept for OUTPUT frames: a few, each at most 4 MiB, so at most 16 MiB of heap
     * per subtask. Larger frames (go.batch.bytes above about 3.5 MiB) get a new array each.
     */
    private static final int PAYLOAD_POOL_ARRAYS = 4;

    private static final int PAYLOAD_POOL_MAX_BYTES = 4 << 20;

    /** Longest a wait for SNAPSHOT or END_ACK sleeps on the inbox before it looks at the mailbox again. */
    private static final long AWAIT_POLL_MS = 10;

    private final GoAgentSpec spec;
    private final transient MailboxExecutor mailbox;

    // Options, read once.
    private transient int batchRows;
    private transient long batchBytes;
    private transient long batchTimeoutMs;
    private transient int maxFrame;
    private transient long barrierTimeoutMs;
    private transient long endTimeoutMs;

    // Keys.
    private transient TypeSerializer<Object> keySerializer;
    private transient KeyBytes keyBytes;
    /**
     * The keyed backend when it already computes the current key's key group (Flink's heap and
     * RocksDB backends, on every record); null: the operator computes it.
     */
    private transient AbstractKeyedStateBackend<?> keyContext;
    private transient int maxParallelism;
    private transient KeyGroupRange keyGroups;

    // Arrow and the Go session.
    private transient BufferAllocator allocator;
    private transient BatchWriter batch;
    private transient OutputReader outputs;
    private transient List<ByteBuffer> frameParts; // the DATA frame being sent (BatchWriter.finishGathered)
    private transient GoSession session;
    private transient ListState<byte[]> markerState;
    private transient StreamRecord<Row> outRecord;
    private transient Counter bytesToGo;
    private transient Counter bytesFromGo;
    private transient Counter rowsByReference;
    private transient GoMetrics goMetrics;
    /** The input rows sent, for OUTPUT_REF; null: every output comes as values (go.output.by.reference). */
    private transient SentRows sentRows;

    /**
     * Frames and the connection's end ({@link ConnectionEnd}), in arrival order: the reader thread
     * adds, only the task thread takes.
     */
    private transient LinkedBlockingQueue<Object> inbox;
    /** OUTPUT payload arrays, from the reader thread to the task thread and back. */
    private transient PayloadPool payloads;

    // Protocol state (task thread only).
    private transient long credit;
    private transient long batchEpoch;
    private transient ArrayDeque<Long> pendingWatermarks;
    private transient PendingSnapshot snapshotInFlight;
    private transient Map<Long, PendingSnapshot> snapshotsReady;
    private transient boolean endAcked;
    private transient Exception failure;
    private transient boolean closed;

    GoAgentOperator(StreamOperatorParameters<Row> parameters, GoAgentSpec spec) {
        super(parameters);
        this.spec = spec;
        this.mailbox = parameters.getMailboxExecutor();
    }

    // ---- lifecycle, in call order -------------------------------------------------------

    @Override
    protected boolean isUsingCustomRawKeyedState() {
        // The sections go to raw keyed state; Flink must not put legacy timers there.
        return true;
    }

    @Override
    public void initializeState(StateInitializationContext context) throws Exception {
        TaskThreadLocals.claimStringBuffer(); // before any socket operation on this thread
        super.initializeState(context);
        GoAgentConfig cfg = spec.config;
        batchRows = cfg.get(GoAgentOptions.GO_BATCH_SIZE);
        batchBytes = cfg.get(GoAgentOptions.GO_BATCH_BYTES);
        batchTimeoutMs = cfg.get(GoAgentOptions.GO_BATCH_TIMEOUT_MS);
        maxFrame = (int) (long) cfg.get(GoAgentOptions.GO_MAX_FRAME_BYTES);
        barrierTimeoutMs = cfg.get(GoAgentOptions.GO_BARRIER_TIMEOUT_MS);
        endTimeoutMs = cfg.get(GoAgentOptions.GO_END_TIMEOUT_MS);

        if (getKeyedStateBackend() == null) {
            throw new IllegalStateException("a Go agent operator needs a keyed input (use GoAgents.connect on a KeyedStream)");
        }
        @SuppressWarnings("unchecked")
        TypeSerializer<Object> ks = (TypeSerializer<Object>) getKeyedStateBackend().getKeySerializer();
        keySerializer = ks.duplicate();
        keyBytes = new KeyBytes(keySerializer);
        TaskInfo task = getRuntimeContext().getTaskInfo();
        maxParallelism = task.getMaxNumberOfParallelSubtasks();
        keyGroups = KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex(
                maxParallelism, task.getNumberOfParallelSubtasks(), task.getIndexOfThisSubtask());
        keyContext = getKeyedStateBackend() instanceof AbstractKeyedStateBackend<?> b
                && b.getNumberOfKeyGroups() == maxParallelism ? b : null;

        // Arrow buffers: one bounded root per subtask. A batch is flushed at go.batch.bytes and a
        // frame is at most go.max.frame.bytes, so twice that covers vector growth by doubling.
        long limit = 2L * maxFrame + (16L << 20);
        allocator = new RootAllocator(limit);
        batch = new BatchWriter(allocator, limit / 2, TypeMapping.inputFields(spec.inputType));
        outputs = new OutputReader(allocator, limit / 2, spec.outputRowType());
        frameParts = new ArrayList<>(64);
        outRecord = new StreamRecord<>(null);
        bytesToGo = getMetricGroup().counter(METRIC_BYTES_TO_GO);
        bytesFromGo = getMetricGroup().counter(METRIC_BYTES_FROM_GO);
        rowsByReference = getMetricGroup().counter(METRIC_ROWS_BY_REFERENCE);
        goMetrics = new GoMetrics(getMetricGroup());
        pendingWatermarks = new ArrayDeque<>();
        snapshotsReady = new HashMap<>();
        sentRows = outputByReference() ? new SentRows(batchRows * 4) : null;

        markerState = context.getOperatorStateStore().getUnionListState(
                new ListStateDescriptor<>(MARKER_STATE, PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO));
        List<Messages.Restore> restores = new ArrayList<>();
        List<byte[]> markers = new ArrayList<>();
        if (context.isRestored()) {
            for (KeyGroupStatePartitionStreamProvider p : context.getRawKeyedStateInputs()) {
                int kg = p.getKeyGroupId();
                if (!keyGroups.contains(kg)) {
                    continue;
                }
                byte[] section = RawSections.read(p.getStream(), kg);
                if (section != null) {
                    restores.add(new Messages.Restore(kg, section));
                }
            }
            for (byte[] m : markerState.get()) {
                if (m != null && m.length > 0) {
                    markers.add(m);
                }
            }
        }
        startSession(restores, markers);
    }

    /**
     * Whether output rows may come back by reference (OUTPUT_REF): asked for, the input is of Row
     * type equal to the output's (so an input Row is a valid output Row), and object reuse is off
     * (so the Row objects Flink hands in are not changed after processElement).
     */
    private boolean outputByReference() {
        if (!spec.config.get(GoAgentOptions.GO_OUTPUT_BY_REFERENCE)) {
            return false;
        }
        String why = null;
        if (!(spec.inputType instanceof RowTypeInfo) || !spec.inputType.equals(TypeMapping.outputRowType(spec.outputRowType()))) {
            why = "the input type " + spec.inputType + " is not the output type";
        } else if (getExecutionConfig().isObjectReuseEnabled()) {
            why = "object reuse is enabled";
        }
        if (why != null) {
            LOG.info("Output rows come back from Go as values, not by reference: {}", why);
            return false;
        }
        return true;
    }

    private void startSession(List<Messages.Restore> restores, List<byte[]> markers) throws Exception {
        GoAgentConfig cfg = spec.config;
        TaskInfo task = getRuntimeContext().getTaskInfo();
        String binary = GoAgentSpec.resolveBinary(cfg.get(GoAgentOptions.GO_BINARY), getRuntimeContext().getDistributedCache());
        Messages.Open open = new Messages.Open(
                spec.agentName,
                cfg.toWireOptions(),
                getRuntimeContext().getJobInfo().getJobId().toHexString(),
                getOperatorID().toHexString(),
                task.getIndexOfThisSubtask(),
                task.getNumberOfParallelSubtasks(),
                maxParallelism,
                keyGroups.getStartKeyGroup(),
                keyGroups.getEndKeyGroup(),
                task.getAttemptNumber(),
                batch.schemaBytes(),
                maxFrame,
                sentRows != null);
        String prefix = "[" + task.getTaskNameWithSubtasks() + "]";
        session = GoSession.start(new GoSession.StartSpec(
                binary, prefix, Path.of(System.getProperty("java.io.tmpdir")), open, restores, markers,
                cfg.get(GoAgentOptions.GO_STARTUP_TIMEOUT_MS), cfg.get(GoAgentOptions.GO_MEMORY_LIMIT),
                (int) (long) cfg.get(GoAgentOptions.GO_SOCKET_BUFFER_BYTES)));
        try {
            outputs.checkSchema(SchemaIO.fromBytes(session.ready().outputSchema()));
        } catch (ProtocolException e) {
            session.sendError(e.code(), e.detail());
            throw session.failure(e.getMessage(), e);
        }
        credit = session.ready().credit();
        inbox = new LinkedBlockingQueue<>();
        payloads = new PayloadPool(PAYLOAD_POOL_ARRAYS, PAYLOAD_POOL_MAX_BYTES);
        session.startReader(payloads,
                f -> deliver(f, "flinkgo " + f.type()),
                t -> deliver(new ConnectionEnd(t), "flinkgo connection ended"));
    }

    /**
     * Reader thread: queues the item, then posts a mail that applies the inbox. The inbox, not
     * the mail, carries the item: after Flink has quiesced the mailbox (StreamTask.afterInvoke,
     * before it drains the mails still queued, which can include a checkpoint) every mail is
     * rejected, and {@link #await} takes the item from the inbox itself.
     */
    private void deliver(Object item, String name) {
        inbox.add(item);
        try {
            mailbox.execute(this::applyInbox, name);
        } catch (RuntimeException e) {
            // The mailbox is quiesced or closed: an await on the task thread applies the item, or
            // the task is shutting down and no longer needs it.
            LOG.debug("{} not posted as a mail: {}", name, e.toString());
        }
    }

    /**
     * Task thread: applies the oldest queued item (a mail finds none if an await took it). One
     * item per mail, never all that are queued: a wait for SNAPSHOT must stop right after it, so
     * that the OUTPUT frames Go sent after the SNAPSHOT are emitted after the barrier (applying
     * them before it would put rows of the next checkpoint into this one: duplicates on restore).
     */
    private void applyInbox() throws Exception {
        Object item = inbox.poll();
        if (item != null) {
            apply(item);
        }
    }

    private void apply(Object item) throws Exception {
        if (item instanceof Frame) {
            onFrame((Frame) item);
        } else {
            onConnectionEnd(((ConnectionEnd) item).cause());
        }
    }

    @Override
    public void processElement(StreamRecord<IN> element) throws Exception {
        checkFailure();
        while (credit <= 0) {
            // Out of credit: Go holds a full window. Outputs and CREDIT arrive as mails.
            mailbox.yield();
            checkFailure();
        }
        Object key = getCurrentKey();
        keyBytes.serialize(key);
        // Flink set the current key (and its key group) before this call; hashing the key again
        // cost about 5 % of the task thread.
        int kg = keyContext != null ? keyContext.getCurrentKeyGroupIndex()
                : KeyGroupRangeAssignment.assignToKeyGroup(key, maxParallelism);
        batch.append(kg, keyBytes.buffer(), keyBytes.length(), element.hasTimestamp(), element.getTimestamp(),
                element.getValue());
        if (sentRows != null) {
            sentRows.add(element.getValue(), element.hasTimestamp(), element.getTimestamp());
        }
        credit--;
        if (batch.rows() >= batchRows || batch.bytes() >= batchBytes || credit <= 0 || batchTimeoutMs == 0) {
            flush();
        } else if (batch.rows() == 1) {
            scheduleBatchTimeout();
        }
    }

    @Override
    public void processWatermark(Watermark mark) throws Exception {
        // Held until Go has finished every input before it (WM_ACK); see onFrame.
        checkFailure();
        flush();
        pendingWatermarks.addLast(mark.getTimestamp());
        send(FrameType.WATERMARK, new Messages.WatermarkTs(mark.getTimestamp()).encode());
    }

    @Override
    public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
        super.prepareSnapshotPreBarrier(checkpointId);
        checkFailure();
        flush();
        PendingSnapshot p = new PendingSnapshot(checkpointId);
        snapshotInFlight = p;
        send(FrameType.BARRIER, new Messages.CheckpointId(checkpointId).encode());
        // Every OUTPUT before SNAPSHOT(n) is emitted by the mails that run while we wait.
        await(() -> p.complete, barrierTimeoutMs, "SNAPSHOT for checkpoint " + checkpointId, "go.barrier.timeout.ms");
        snapshotInFlight = null;
        snapshotsReady.put(checkpointId, p);
    }

    @Override
    public void snapshotState(StateSnapshotContext context) throws Exception {
        super.snapshotState(context);
        PendingSnapshot p = snapshotsReady.remove(context.getCheckpointId());
        // Older ones belong to checkpoints that were abandoned without an abort notification.
        snapshotsReady.keySet().removeIf(id -> id < context.getCheckpointId());
        if (p == null) {
            throw new IllegalStateException("no snapshot from the Go process for checkpoint " + context.getCheckpointId()
                    + " (prepareSnapshotPreBarrier did not complete)");
        }
        KeyedStateCheckpointOutputStream raw = context.getRawKeyedOperatorStateOutput();
        OutputStream out = new BufferedOutputStream(raw, 1 << 16);
        for (int kg = keyGroups.getStartKeyGroup(); kg <= keyGroups.getEndKeyGroup(); kg++) {
            out.flush();
            raw.startNewKeyGroup(kg);
            RawSections.write(out, p.sections.get(kg));
        }
        out.flush(); // never close: Flink owns the raw stream
        markerState.update(List.of(p.marker));
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) throws Exception {
        super.notifyCheckpointComplete(checkpointId);
        sendBestEffort(FrameType.CHECKPOINT_COMPLETE, checkpointId);
    }

    @Override
    public void notifyCheckpointAborted(long checkpointId) throws Exception {
        super.notifyCheckpointAborted(checkpointId);
        snapshotsReady.remove(checkpointId);
        sendBestEffort(FrameType.CHECKPOINT_ABORTED, checkpointId);
    }

    @Override
    public void endInput() throws Exception {
        checkFailure();
        flush();
        send(FrameType.END_INPUT, Messages.empty());
        await(() -> endAcked, endTimeoutMs, "END_ACK", "go.end.timeout.ms");
    }

    @Override
    public void finish() throws Exception {
        super.finish();
        checkFailure();
        flush();
    }

    @Override
    public void close() throws Exception {
        if (closed) {
            return;
        }
        closed = true;
        try {
            if (session != null) {
                session.close(failure == null, spec.config.get(GoAgentOptions.GO_CLOSE_TIMEOUT_MS));
            }
        } finally {
            closeArrow();
            super.close();
        }
    }

    private void closeArrow() {
        try {
            if (batch != null) {
                batch.close();
            }
            if (outputs != null) {
                outputs.close();
            }
            if (allocator != null) {
                allocator.close();
            }
        } catch (RuntimeException e) {
            LOG.warn("releasing Arrow buffers failed", e);
        }
    }

    // ---- frames from Go (mails on the task thread) ---------------------------------------

    private void onFrame(Frame f) throws Exception {
        if (closed || failure != null) {
            return;
        }
        bytesFromGo.inc(Frames.HEADER_BYTES + f.length());
        try {
            applyFrame(f);
        } catch (ProtocolException e) {
            // A frame that does not decode (malformed_frame): answered with ERROR like any violation.
            throw failure == null ? protocolViolation(e) : e;
        }
    }

    private void applyFrame(Frame f) throws Exception {
        switch (f.type()) {
            case CREDIT:
                Messages.Credit c = Messages.Credit.decode(f.payload());
                credit += c.rows();
                if (sentRows != null) {
                    sentRows.advance(c.keepFrom());
                }
                break;
            case OUTPUT_REF:
                if (sentRows == null) {
                    throw protocolViolation(new ProtocolException(ErrorCode.UNEXPECTED_FRAME,
                            "OUTPUT_REF, but OPEN did not offer output_refs"));
                }
                long[] runs = Messages.OutputRef.decode(f.payload()).runs();
                for (int i = 0; i < runs.length; i += 2) {
                    sentRows.check(runs[i], runs[i + 1]); // all before any is emitted: nothing half-applied
                }
                for (int i = 0; i < runs.length; i += 2) {
                    sentRows.emit(runs[i], runs[i + 1], this::emitReferenced);
                    rowsByReference.inc(runs[i + 1]);
                }
                break;
            case OUTPUT:
                try {
                    outputs.read(f.payload(), f.length(), (ts, row) -> {
                        if (ts == null) {
                            outRecord.replace(row);
                            outRecord.eraseTimestamp();
                        } else {
                            outRecord.replace(row, ts);
                        }
                        output.collect(outRecord);
                    });
                } finally {
                    payloads.give(f.payload()); // no emitted row refers to it (OutputReader.read)
                }
                break;
            case WM_ACK:
                onWatermarkAck(Messages.WatermarkTs.decode(FrameType.WM_ACK, f.payload()).ts());
                break;
            case SNAPSHOT:
                onSnapshot(Messages.Snapshot.decode(f.payload()));
                break;
            case END_ACK:
                Messages.decodeEmpty(FrameType.END_ACK, f.payload());
                endAcked = true;
                break;
            case METRICS:
                goMetrics.update(Messages.Metrics.decode(f.payload()));
                break;
            case ERROR:
                Messages.Error e = Messages.Error.decode(f.payload());
                throw fail(session.failure("it reported " + e.code() + ": " + e.message(), null));
            default:
                throw protocolViolation(new ProtocolException(ErrorCode.UNEXPECTED_FRAME,
                        f.type() + " is not sent by the Go process after READY"));
        }
    }

    /** Emits an input row that came back by reference, as OUTPUT would have made it (RowKind INSERT). */
    private void emitReferenced(Object value, boolean hasTs, long ts) {
        Row row = (Row) value;
        if (row.getKind() != RowKind.INSERT) {
            row = Row.copy(row);
            row.setKind(RowKind.INSERT);
        }
        if (hasTs) {
            outRecord.replace(row, ts);
        } else {
            outRecord.replace(row);
            outRecord.eraseTimestamp();
        }
        output.collect(outRecord);
    }

    private void onWatermarkAck(long ts) throws Exception {
        if (!pendingWatermarks.contains(ts)) {
            throw protocolViolation(new ProtocolException(ErrorCode.UNEXPECTED_FRAME,
                    "WM_ACK(" + ts + ") for a watermark that was not sent or was already acknowledged; pending "
                            + pendingWatermarks));
        }
        while (pendingWatermarks.peekFirst() != ts) {
            pendingWatermarks.removeFirst(); // acknowledged implicitly by a later one
        }
        pendingWatermarks.removeFirst();
        output.emitWatermark(new Watermark(ts));
    }

    private void onSnapshot(Messages.Snapshot s) throws Exception {
        PendingSnapshot p = snapshotInFlight;
        if (p == null || p.checkpointId != s.checkpointId() || p.complete) {
            throw protocolViolation(new ProtocolException(ErrorCode.UNEXPECTED_FRAME,
                    "SNAPSHOT for checkpoint " + s.checkpointId() + " while "
                            + (p == null ? "no barrier is pending" : "the pending barrier is for checkpoint " + p.checkpointId)));
        }
        for (Messages.Section sec : s.sections()) {
            if (!keyGroups.contains(sec.keyGroup())) {
                throw protocolViolation(new ProtocolException(ErrorCode.MALFORMED_FRAME,
                        "SNAPSHOT section for key group " + sec.keyGroup() + " outside this subtask's range " + keyGroups));
            }
            if (p.sections.put(sec.keyGroup(), sec.section()) != null) {
                throw protocolViolation(new ProtocolException(ErrorCode.MALFORMED_FRAME,
                        "SNAPSHOT has two sections for key group " + sec.keyGroup()));
            }
        }
        if (s.last()) {
            p.marker = s.marker();
            p.complete = true;
        }
    }

    private void onConnectionEnd(Throwable t) throws Exception {
        if (closed || failure != null || session.isClosing()) {
            return;
        }
        if (t instanceof ProtocolException) {
            throw protocolViolation((ProtocolException) t);
        }
        String what = t == null ? "it closed the connection unexpectedly (end of stream)" : "the connection failed: " + t;
        throw fail(session.failure(what, t));
    }

    // ---- helpers ---------------------------------------------------------------------------

    /** Sends the current batch, if any, as one DATA frame. */
    private void flush() throws Exception {
        if (batch.rows() == 0) {
            return;
        }
        batchEpoch++;
        frameParts.clear();
        try {
            int rows = batch.finishGathered(frameParts);
            long size = Channel.length(frameParts);
            if (size + 1L > maxFrame) {
                throw fail(new IllegalStateException("a batch of " + rows + " rows encodes to " + size
                        + " bytes, above go.max.frame.bytes=" + maxFrame + "; lower go.batch.size or go.batch.bytes"));
            }
            send(FrameType.DATA, size, ch -> ch.sendGathered(FrameType.DATA, frameParts, size));
        } finally {
            frameParts.clear();
            batch.reset();
        }
    }

    private void scheduleBatchTimeout() {
        long epoch = batchEpoch;
        ProcessingTimeService time = getProcessingTimeService();
        time.registerTimer(time.getCurrentProcessingTime() + batchTimeoutMs, ts -> {
            if (epoch == batchEpoch && !closed && failure == null) {
                flush();
            }
        });
    }

    /**
     * Runs the mailbox's mails and applies Go's frames until {@code done}, failing on a Go failure
     * or after the timeout.
     *
     * <p>Design note: never {@code mailboxExecutor.yield()}, which returns only with a mail. Flink
     * can run a checkpoint, and so {@code prepareSnapshotPreBarrier}, after it has quiesced the
     * mailbox and the timers (StreamTask.afterInvoke drains the mails still queued, a checkpoint
     * triggered while the task waited for its final checkpoint among them); then neither the
     * reader's mails nor a timer can arrive, and a yield would wait forever. So this runs the
     * mails there are, otherwise waits on the inbox for at most {@link #AWAIT_POLL_MS}, and checks
     * the deadline (a monotonic clock, no timer) on every turn.
     */
    private void await(BooleanSupplier done, long timeoutMs, String what, String option) throws Exception {
        long start = System.nanoTime();
        long timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (!done.getAsBoolean()) {
            checkFailure();
            if (System.nanoTime() - start >= timeoutNanos) {
                session.process().kill();
                throw fail(session.failure("no " + what + " within " + timeoutMs + " ms (" + option
                        + "); the process is considered hung and was killed", null));
            }
            if (mailbox.tryYield()) {
                continue;
            }
            Object item = inbox.poll(AWAIT_POLL_MS, TimeUnit.MILLISECONDS);
            if (item != null) {
                apply(item);
            }
        }
    }

    private void send(FrameType type, byte[] payload) throws Exception {
        send(type, payload.length, ch -> ch.send(type, payload));
    }

    /** A frame write on the session's channel. */
    @FunctionalInterface
    private interface FrameWrite {
        void write(Channel ch) throws IOException;
    }

    /** Sends a frame of {@code len} payload bytes with {@code write}; a failed write fails the task. */
    private void send(FrameType type, long len, FrameWrite write) throws Exception {
        try {
            write.write(session.channel());
            bytesToGo.inc(Frames.HEADER_BYTES + len);
        } catch (IOException e) {
            throw fail(session.failure("sending " + type + " failed: " + e, e));
        }
    }

    private void sendBestEffort(FrameType type, long checkpointId) {
        if (session == null || closed || failure != null) {
            return;
        }
        try {
            byte[] payload = new Messages.CheckpointId(checkpointId).encode();
            session.channel().send(type, payload);
            bytesToGo.inc(Frames.HEADER_BYTES + payload.length);
        } catch (IOException e) {
            LOG.info("{}({}) not delivered to the Go process: {}", type, checkpointId, e.toString());
        }
    }

    private Exception protocolViolation(ProtocolException e) {
        session.sendError(e.code(), e.detail());
        return fail(session.failure("protocol violation: " + e.getMessage(), e));
    }

    private Exception fail(Exception e) {
        if (failure == null) {
            failure = e;
        }
        return e;
    }

    private void checkFailure() throws Exception {
        if (failure != null) {
            throw failure instanceof GoProcessException
                    ? new GoProcessException(failure.getMessage(), failure)
                    : failure;
        }
    }

    /** The end of the connection as an inbox item: null at a clean end of stream, else the failure. */
    private record ConnectionEnd(Throwable cause) {}

    /** A SNAPSHOT being assembled from its frames. */
    private static final class PendingSnapshot {
        final long checkpointId;
        final Map<Integer, byte[]> sections = new HashMap<>();
        byte[] marker;
        boolean complete;

        PendingSnapshot(long checkpointId) {
            this.checkpointId = checkpointId;
        }
    }
}
