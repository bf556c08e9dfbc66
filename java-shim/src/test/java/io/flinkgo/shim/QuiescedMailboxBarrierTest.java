package io.flinkgo.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.operators.StreamOperatorFactory;
import org.apache.flink.streaming.api.transformations.OneInputTransformation;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.types.Row;
import org.apache.flink.util.ExceptionUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import io.flinkgo.shim.fake.FakeBinary;

/**
 * A checkpoint that runs after the task's mailbox was quiesced, with the Java fake peer.
 *
 * <p>When a task's input has ended and all its data is processed, {@code StreamTask.afterInvoke}
 * quiesces the mailbox ({@code MailboxProcessor.prepareClose}: from then on every
 * {@code mailboxExecutor.execute} throws) and the processing-time timers, and then drains the
 * mails still queued. A checkpoint that the coordinator triggered just before
 * ({@code triggerCheckpointAsync}: a mail, since the upstream tasks have finished) runs in that
 * drain, and so does this operator's {@code prepareSnapshotPreBarrier}: the SNAPSHOT that answers
 * the BARRIER cannot arrive as a mail, and no timer wakes the wait. These tests put the operator
 * in that state without a cluster: end the input, quiesce the harness's mailbox, take a checkpoint.
 */
class QuiescedMailboxBarrierTest {
    private static final RowTypeInfo INPUT = (RowTypeInfo) Types.ROW_NAMED(
            new String[] {"customer", "order_id", "amount"}, Types.STRING, Types.LONG, Types.DOUBLE);
    private static final int ROWS = 20;

    @TempDir
    Path tmp;

    /**
     * A harness around the operator with the fake Go binary {@code name} in {@code mode} (empty:
     * the plain fake), DATA batches of {@code batchSize} rows and the given barrier timeout.
     */
    private KeyedOneInputStreamOperatorTestHarness<String, Row, Row> harness(String name, String mode, int batchSize,
            long barrierTimeoutMs) throws Exception {
        Map<String, String> fakeEnv = mode.isEmpty() ? Map.of() : Map.of("FAKE_MODE", mode);
        GoAgentConfig config = GoAgentConfig.builder().binary(FakeBinary.write(tmp, name, fakeEnv).toString())
                .batchSize(batchSize).set("go.barrier.timeout.ms", Long.toString(barrierTimeoutMs)).build();
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        KeyedStream<Row, String> in = env.fromData(INPUT, Row.of("c0", 0L, 0.5))
                .keyBy(r -> (String) r.getField(0), Types.STRING);
        @SuppressWarnings("unchecked")
        StreamOperatorFactory<Row> factory = ((OneInputTransformation<Row, Row>) GoAgents.connect(in, config)
                .getTransformation()).getOperatorFactory();
        return new KeyedOneInputStreamOperatorTestHarness<>(factory, r -> (String) r.getField(0), Types.STRING, 128, 1, 0);
    }

    /** Opens the operator, sends ROWS rows, ends the input, then quiesces the mailbox as afterInvoke does. */
    private static void runUntilQuiesced(KeyedOneInputStreamOperatorTestHarness<String, Row, Row> h) throws Exception {
        h.open();
        for (long i = 0; i < ROWS; i++) {
            h.processElement(new StreamRecord<>(Row.of("c" + (i % 7), i, i + 0.5), i));
        }
        h.endInput(); // END_INPUT; yields until END_ACK, every OUTPUT before it is emitted
        assertEquals(ROWS, h.extractOutputValues().size());
        h.getTaskMailbox().quiesce();
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aCheckpointAfterTheMailboxIsQuiescedGetsItsSnapshot() throws Exception {
        KeyedOneInputStreamOperatorTestHarness<String, Row, Row> h = harness("fake-agent", "", 8, 20_000);
        try {
            runUntilQuiesced(h);
            h.prepareSnapshotPreBarrier(1); // BARRIER(1); the fake answers with SNAPSHOT(1) at once
            OperatorSubtaskState state = h.snapshot(1, 1);
            assertTrue(state.getRawKeyedState().hasState(), "no raw keyed state (the sections) in " + state);
            assertTrue(state.getManagedOperatorState().hasState(), "no recovery marker in " + state);
        } finally {
            h.close();
        }
    }

    /**
     * The wait for SNAPSHOT stops right after it: an OUTPUT that Go sent behind the SNAPSHOT (an
     * input after the cut) is emitted after the barrier, never before it. Frames reach the task
     * thread both as mails and through the wait's own look at the queue; a mail that applied
     * every queued frame let such an OUTPUT overtake the barrier (a duplicate after a restore).
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void anOutputBehindTheSnapshotIsEmittedAfterTheBarrier() throws Exception {
        KeyedOneInputStreamOperatorTestHarness<String, Row, Row> h = harness("fake-after", "output_after_snapshot", 4, 20_000);
        try {
            h.open();
            long row = 0;
            for (long cp = 1; cp <= 30; cp++) {
                for (int i = 0; i < 8; i++, row++) {
                    h.processElement(new StreamRecord<>(Row.of("c" + (row % 5), row, row + 0.5), row));
                }
                h.prepareSnapshotPreBarrier(cp); // pending batch, BARRIER; OUTPUTs, SNAPSHOT, then the late OUTPUT
                for (Row r : h.extractOutputValues()) {
                    assertTrue(!r.getField(0).equals("after-snapshot-" + cp),
                            "the OUTPUT Go sent after SNAPSHOT(" + cp + ") was emitted before its barrier");
                }
                h.snapshot(cp, cp);
            }
            h.endInput(); // every frame is applied by END_ACK
            long late = h.extractOutputValues().stream().filter(r -> ((String) r.getField(0)).startsWith("after-snapshot-")).count();
            assertEquals(30, late, "the late OUTPUTs, one per checkpoint, after their barriers");
        } finally {
            h.close();
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void theBarrierTimeoutHoldsAfterTheMailboxIsQuiesced() throws Exception {
        KeyedOneInputStreamOperatorTestHarness<String, Row, Row> h = harness("fake-hang", "hang_on_barrier", 8, 1_000);
        try {
            runUntilQuiesced(h);
            Exception e = assertThrows(Exception.class, () -> h.prepareSnapshotPreBarrier(1));
            String s = ExceptionUtils.stringifyException(e);
            assertTrue(s.contains("no SNAPSHOT for checkpoint 1") && s.contains("go.barrier.timeout.ms") && s.contains("killed"), s);
        } finally {
            h.getOperator().close(); // as Flink does after a failure: close without finish
        }
    }
}
