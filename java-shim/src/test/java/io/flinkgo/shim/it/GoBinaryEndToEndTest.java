package io.flinkgo.shim.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.metrics.Counter;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.ExceptionUtils;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.flinkgo.shim.GoAgentConfig;
import io.flinkgo.shim.GoAgentOperator;
import io.flinkgo.shim.GoAgents;

/**
 * End-to-end jobs against the real Go binaries (tag {@code go-binary}; {@code make java-test}
 * passes their paths): a failure injected next to the agent, a slow action, and bad setups.
 *
 * <ul>
 *   <li>{@code -Dflinkgo.binary}: bin/orderscoring (cmd/orderscoring);
 *   <li>{@code -Dflinkgo.testagent}: bin/flinkgo-testagent (agents "passthrough" and "slow",
 *       examples/testagents);
 *   <li>{@code -Dflinkgo.fixture.badversion}, {@code -Dflinkgo.fixture.badtoken}: the fixtures
 *       in testdata/fixtures.
 * </ul>
 *
 * Kept short for a loaded 2-core machine: small inputs, generous deadlines, one job at a time.
 */
@Tag("go-binary")
class GoBinaryEndToEndTest {
    static final InMemoryReporter METRICS = InMemoryReporter.createWithRetainedMetrics();

    @RegisterExtension
    static final MiniClusterExtension CLUSTER = new MiniClusterExtension(new MiniClusterResourceConfiguration.Builder()
            .setConfiguration(METRICS.addToConfiguration(new Configuration()))
            .setNumberTaskManagers(1)
            .setNumberSlotsPerTaskManager(4)
            .build());

    static String binary(String property, String what) {
        String b = System.getProperty(property, "");
        assertTrue(!b.isBlank() && Files.isExecutable(Path.of(b)),
                "set -D" + property + " to the absolute path of " + what + " (make agent builds it into bin/); got '" + b + "'");
        return b;
    }

    static StreamExecutionEnvironment env(int parallelism, boolean restarts, long checkpointMs) {
        Configuration conf = new Configuration();
        conf.setString("restart-strategy.type", restarts ? "fixed-delay" : "none");
        conf.setString("restart-strategy.fixed-delay.attempts", "3");
        conf.setString("restart-strategy.fixed-delay.delay", "200 ms");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(parallelism);
        env.enableCheckpointing(checkpointMs);
        return env;
    }

    // ---- a. a failure next to the agent: restart from the checkpoint, nothing lost or doubled --

    /**
     * When armed, fails once: on the first row after {@code AFTER} completed checkpoints, once the
     * sink has committed rows (so that a restart from scratch would show up as duplicates).
     */
    static final class FailOnce extends RichMapFunction<Row, Row> implements CheckpointListener {
        private static final long serialVersionUID = 1L;
        static final int AFTER = 2;
        static final Map<String, AtomicBoolean> FAILED = new ConcurrentHashMap<>();
        /** Rows committed when the failure was thrown: they must not come again after the restart. */
        static final Map<String, Integer> COMMITTED_AT_FAILURE = new ConcurrentHashMap<>();
        /** Ids of the completed checkpoints (every subtask is notified of each). */
        static final Map<String, Set<Long>> COMPLETED = new ConcurrentHashMap<>();

        private final String name;
        private final boolean armed;

        FailOnce(String name, boolean armed) {
            this.name = name;
            this.armed = armed;
            FAILED.put(name, new AtomicBoolean());
            COMPLETED.put(name, ConcurrentHashMap.newKeySet());
        }

        @Override
        public Row map(Row r) {
            if (armed && COMPLETED.get(name).size() >= AFTER && !CommittingCollector.committed(name).isEmpty()
                    && FAILED.get(name).compareAndSet(false, true)) {
                COMMITTED_AT_FAILURE.put(name, CommittingCollector.committed(name).size());
                throw new IllegalStateException("injected failure (once) at " + r + " after " + AFTER + " completed checkpoints");
            }
            return r;
        }

        @Override
        public void notifyCheckpointComplete(long checkpointId) {
            COMPLETED.get(name).add(checkpointId);
        }
    }

    /** Runs order-scoring on n orders with FailOnce behind the agent; returns the committed rows. */
    private static List<String> orderScoringRun(MiniCluster cluster, String name, long n, boolean fail) throws Exception {
        return orderScoringRun(cluster, name, n, fail, Map.of());
    }

    private static List<String> orderScoringRun(MiniCluster cluster, String name, long n, boolean fail,
            Map<String, String> options) throws Exception {
        CommittingCollector.reset(name);
        StreamExecutionEnvironment env = env(2, fail, 100);
        DataStream<Row> scored = GoAgents.connect(AgentJobTestBase.orders(env, n, 400),
                GoAgentConfig.builder().binary(binary("flinkgo.binary", "the order-scoring binary")).setAll(options).build())
                .uid("agent");
        CommittingCollector.addTo(scored.map(new FailOnce(name, fail)).returns(scored.getType()).uid("fail-once"), name);
        JobClient job = env.executeAsync(name);
        job.getJobExecutionResult().get();
        if (fail) {
            assertTrue(FailOnce.FAILED.get(name).get(), "the failure was never injected (input ended before "
                    + FailOnce.AFTER + " checkpoints completed)");
            // Rows committed before the failure make a restart from scratch show up as duplicates.
            assertTrue(FailOnce.COMMITTED_AT_FAILURE.get(name) > 0, "nothing was committed before the failure");
            String history = AgentJobTestBase.exceptionHistory(cluster, job.getJobID());
            assertTrue(history.contains("injected failure (once)"), history);
        }
        List<String> rows = new ArrayList<>();
        for (Row r : CommittingCollector.committed(name)) {
            rows.add(r.toString());
        }
        return rows;
    }

    @Test
    void aFailureBehindTheAgentRestartsFromTheCheckpointAndCommitsTheRowsOfAFailureFreeRun(
            @InjectMiniCluster MiniCluster cluster) throws Exception {
        long n = 800;
        List<String> clean = orderScoringRun(cluster, "e2e-clean", n, false);
        List<String> failed = orderScoringRun(cluster, "e2e-fail-once", n, true);
        // Every field counts: orders, avg_amount and risk depend on the restored per-key state.
        assertEquals(n, clean.size(), "failure-free run");
        assertEquals(failed.size(), new TreeSet<>(failed).size(), "duplicates after the restart");
        assertEquals(new TreeSet<>(clean), new TreeSet<>(failed), "rows after a restart differ from a failure-free run");
        AgentJobTestBase.assertExactlyOnce(n, CommittingCollector.committed("e2e-fail-once"));
    }

    /**
     * {@code go.credit.bytes=1}: every row is larger than the window, so once READY's 1024 rows of
     * credit are spent each subtask sends one row, waits for its CREDIT and sends the next. The job
     * still produces exactly the rows of a run with the default window.
     */
    @Test
    void aCreditWindowOfOneRowProducesTheRowsOfTheDefaultWindow(@InjectMiniCluster MiniCluster cluster) throws Exception {
        long n = 3000; // about 1500 per subtask: 1024 on READY's credit, the rest one at a time
        List<String> plain = orderScoringRun(cluster, "e2e-credit-default", n, false);
        List<String> oneRow = orderScoringRun(cluster, "e2e-credit-one-row", n, false, Map.of("go.credit.bytes", "1"));
        assertEquals(n, plain.size(), "default window");
        assertEquals(n, oneRow.size(), "window of one row");
        assertEquals(new TreeSet<>(plain), new TreeSet<>(oneRow), "a window of one row changed the rows");
    }

    /**
     * The pass-through agent emits its input rows as they are, and the input type is the output
     * type: they come back by reference (OUTPUT_REF, go.output.by.reference, the default). A
     * failure behind the agent and a restart from the checkpoint commit exactly the rows of a
     * failure-free run that took every row back as values.
     */
    @Test
    void rowsBackByReferenceSurviveARestartAndEqualRowsBackAsValues(@InjectMiniCluster MiniCluster cluster) throws Exception {
        long n = 3000;
        List<String> values = passThroughRun(cluster, "e2e-ref-values", n, false, false);
        assertEquals(0, LAST_BY_REFERENCE.get(), "rows by reference with go.output.by.reference=false");
        List<String> refs = passThroughRun(cluster, "e2e-ref-fail-once", n, true, true);
        assertTrue(LAST_BY_REFERENCE.get() >= n, "only " + LAST_BY_REFERENCE.get() + " of " + n + " rows came back by reference");
        assertEquals(n, values.size(), "rows back as values");
        assertEquals(refs.size(), new TreeSet<>(refs).size(), "duplicates after the restart");
        assertEquals(new TreeSet<>(values), new TreeSet<>(refs), "rows back by reference differ from rows back as values");
    }

    /** Rows that came back by reference in the last passThroughRun, over every subtask. */
    static final AtomicLong LAST_BY_REFERENCE = new AtomicLong();

    private static List<String> passThroughRun(MiniCluster cluster, String name, long n, boolean fail, boolean byReference)
            throws Exception {
        CommittingCollector.reset(name);
        StreamExecutionEnvironment env = env(2, fail, 100);
        DataStream<Row> out = GoAgents.connect(testRows(env, n, 1000), GoAgentConfig.builder()
                        .binary(binary("flinkgo.testagent", "the test-agent binary")).set("go.agent", "passthrough")
                        .set("go.output.by.reference", Boolean.toString(byReference)).build())
                .uid("agent");
        CommittingCollector.addTo(out.map(new FailOnce(name, fail)).returns(out.getType()).uid("fail-once"), name);
        JobClient job = env.executeAsync(name);
        job.getJobExecutionResult().get();
        // Every attempt's counters (the reporter retains those of the attempt that failed).
        String jobId = job.getJobID().toString();
        LAST_BY_REFERENCE.set(METRICS.getMetricsByGroup().entrySet().stream()
                .filter(g -> jobId.equals(g.getKey().getAllVariables().get("<job_id>")))
                .map(g -> g.getValue().get(GoAgentOperator.METRIC_ROWS_BY_REFERENCE))
                .filter(m -> m instanceof Counter).mapToLong(m -> ((Counter) m).getCount()).sum());
        if (fail) {
            assertTrue(FailOnce.FAILED.get(name).get(), "the failure was never injected");
            assertTrue(FailOnce.COMMITTED_AT_FAILURE.get(name) > 0, "nothing was committed before the failure");
        }
        List<String> rows = new ArrayList<>();
        for (Row r : CommittingCollector.committed(name)) {
            rows.add(r.toString());
        }
        return rows;
    }

    // ---- b. a slow action stalls neither other keys nor checkpoints, but holds the watermark ----

    static final RowTypeInfo TEST_INPUT = (RowTypeInfo) Types.ROW_NAMED(
            new String[] {"id", "customer", "payload"}, Types.LONG, Types.STRING, Types.STRING);

    static final long SLOW_ID = 10;

    static Row testRow(long i) {
        return Row.of(i, i == SLOW_ID ? "slow-1" : "k" + (i % 5), "p" + i);
    }

    static long ts(long id) {
        return 1000 + 10 * id;
    }

    static KeyedStream<Row, String> testRows(StreamExecutionEnvironment env, long n, double perSecond) {
        DataGeneratorSource<Row> source = new DataGeneratorSource<>(GoBinaryEndToEndTest::testRow, n,
                RateLimiterStrategy.perSecond(perSecond), TEST_INPUT);
        return env.fromSource(source,
                        WatermarkStrategy.<Row>forMonotonousTimestamps().withTimestampAssigner((r, t) -> ts((Long) r.getField(0))),
                        "rows")
                .setParallelism(1)
                .keyBy(r -> (String) r.getField(1), Types.STRING);
    }

    /** What the recorder saw, in order: a row, a watermark or a completed checkpoint. */
    record Seen(char kind, long value, String customer, long n, long nanos) {}

    /** Records rows, watermarks and completed checkpoints in arrival order, and forwards. */
    static final class Recorder extends AbstractStreamOperator<Row> implements OneInputStreamOperator<Row, Row> {
        private static final long serialVersionUID = 1L;
        static final Map<String, List<Seen>> SEEN = new ConcurrentHashMap<>();
        private final String name;

        Recorder(String name) {
            this.name = name;
            SEEN.put(name, new CopyOnWriteArrayList<>());
        }

        @Override
        public void processElement(StreamRecord<Row> e) {
            Row r = e.getValue();
            SEEN.get(name).add(new Seen('R', (Long) r.getField("id"), (String) r.getField("customer"),
                    (Long) r.getField("n"), System.nanoTime()));
            output.collect(e);
        }

        @Override
        public void processWatermark(Watermark mark) throws Exception {
            SEEN.get(name).add(new Seen('W', mark.getTimestamp(), null, 0, System.nanoTime()));
            super.processWatermark(mark);
        }

        @Override
        public void notifyCheckpointComplete(long checkpointId) throws Exception {
            SEEN.get(name).add(new Seen('C', checkpointId, null, 0, System.nanoTime()));
            super.notifyCheckpointComplete(checkpointId);
        }
    }

    @Test
    void aSlowActionStallsNeitherOtherKeysNorCheckpointsButHoldsTheWatermark() throws Exception {
        String name = "e2e-slow";
        long n = 80; // 4 s at 20 rows/s; row 10 is the slow one (3 s)
        StreamExecutionEnvironment env = env(1, false, 300);
        env.getConfig().setAutoWatermarkInterval(50);
        DataStream<Row> out = GoAgents.connect(testRows(env, n, 20), GoAgentConfig.builder()
                .binary(binary("flinkgo.testagent", "the test-agent binary")).set("go.agent", "slow").build());
        out.transform("recorder", out.getType(), new Recorder(name)).sinkTo(new DiscardingSink<>());
        env.execute(name);

        List<Seen> seen = Recorder.SEEN.get(name);
        // Every row once, each key's counter 1, 2, 3, ... in input order.
        Map<String, List<Long>> counters = new TreeMap<>();
        TreeSet<Long> ids = new TreeSet<>();
        int slowAt = -1;
        int firstAfter = -1; // the first row the source sent after the slow one
        for (int i = 0; i < seen.size(); i++) {
            Seen s = seen.get(i);
            if (s.kind() != 'R') {
                continue;
            }
            assertTrue(ids.add(s.value()), "row " + s.value() + " twice");
            counters.computeIfAbsent(s.customer(), k -> new ArrayList<>()).add(s.n());
            if (s.value() == SLOW_ID) {
                slowAt = i;
            } else if (s.value() > SLOW_ID && firstAfter < 0) {
                firstAfter = i;
            }
        }
        assertEquals(n, ids.size(), "rows: " + ids);
        counters.forEach((k, ns) -> {
            for (int j = 0; j < ns.size(); j++) {
                assertEquals(j + 1, ns.get(j), "counter of " + k + ": " + ns);
            }
        });
        assertTrue(slowAt > firstAfter && firstAfter >= 0, "the slow row came before the rows after it: " + seen);

        long othersDuring = 0;
        long checkpointsDuring = 0;
        long maxWatermarkBefore = Long.MIN_VALUE;
        for (int i = 0; i < slowAt; i++) {
            Seen s = seen.get(i);
            if (s.kind() == 'W') {
                maxWatermarkBefore = Math.max(maxWatermarkBefore, s.value());
            } else if (i >= firstAfter && s.kind() == 'R') {
                othersDuring++;
            } else if (i >= firstAfter && s.kind() == 'C') {
                checkpointsDuring++;
            }
        }
        double slowSeconds = (seen.get(slowAt).nanos() - seen.get(firstAfter).nanos()) / 1e9;
        String summary = othersDuring + " rows of other keys and " + checkpointsDuring + " completed checkpoints in the "
                + slowSeconds + " s before the slow row; highest watermark before it " + maxWatermarkBefore;
        System.out.println(name + ": " + summary);
        assertTrue(slowSeconds > 2.0, summary);
        assertTrue(othersDuring >= 20, summary);
        assertTrue(checkpointsDuring >= 3, summary);
        // Those rows carry timestamps above the slow row's, so the source's watermark passed it
        // long ago; the agent holds it until the slow row is out.
        assertTrue(maxWatermarkBefore < ts(SLOW_ID), summary);
        boolean released = seen.subList(slowAt, seen.size()).stream().anyMatch(s -> s.kind() == 'W' && s.value() >= ts(SLOW_ID));
        assertTrue(released, "no watermark at or above the slow row after it: " + seen.subList(slowAt, seen.size()));
    }

    // ---- c. bad setups against real binaries ---------------------------------------------------

    private static String failureOf(String fixture) {
        StreamExecutionEnvironment env = env(1, false, 1000);
        DataStream<Row> out = GoAgents.connect(AgentJobTestBase.orders(env, 10, 0),
                GoAgentConfig.builder().binary(fixture).build());
        Exception e = assertThrows(Exception.class, () -> AgentJobTestBase.drain(out.executeAndCollect()));
        return ExceptionUtils.stringifyException(e);
    }

    @Test
    void aBinaryOfAnotherProtocolVersionFailsNamingBothVersions() {
        String fixture = binary("flinkgo.fixture.badversion", "the badversion fixture (testdata/fixtures/badpeer)");
        String s = failureOf(fixture);
        assertTrue(s.contains("version_mismatch") && s.contains("protocol 99") && s.contains("protocol 1")
                && s.contains(fixture), s);
    }

    @Test
    void aBinaryWithTheWrongTokenFailsNamingTheToken() {
        String fixture = binary("flinkgo.fixture.badtoken", "the badtoken fixture (testdata/fixtures/badpeer)");
        String s = failureOf(fixture);
        assertTrue(s.contains("bad_token") && s.contains("token in HELLO does not match") && s.contains(fixture), s);
    }
}
