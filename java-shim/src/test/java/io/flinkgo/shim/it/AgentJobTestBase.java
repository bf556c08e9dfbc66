package io.flinkgo.shim.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.client.program.ClusterClient;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.scheduler.exceptionhistory.RootExceptionHistoryEntry;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.test.junit5.InjectClusterClient;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import io.flinkgo.shim.GoAgentConfig;
import io.flinkgo.shim.GoAgents;

/**
 * Jobs on a MiniCluster running the order-scoring agent (the real Go binary, or the Java fake
 * that mimics it): input {@code customer, order_id, amount}; the output's {@code orders} is the
 * customer's input count, so exactly-once and state continuity are checkable per row: order i of
 * customer {@code c(i % K)} must come out with {@code orders = i / K + 1}, exactly once.
 */
abstract class AgentJobTestBase {
    static final int KEYS = 7;

    @RegisterExtension
    static final MiniClusterExtension CLUSTER = new MiniClusterExtension(new MiniClusterResourceConfiguration.Builder()
            .setNumberTaskManagers(1)
            .setNumberSlotsPerTaskManager(4)
            .build());

    @TempDir
    Path tmp;

    /** Options for the agent under test ({@code go.binary} etc.). */
    abstract GoAgentConfig.Builder config() throws Exception;

    /** A marker of the agent's processes in their command line, to find them for kill -9. */
    abstract String processMarker();

    static final RowTypeInfo INPUT = (RowTypeInfo) Types.ROW_NAMED(
            new String[] {"customer", "order_id", "amount"}, Types.STRING, Types.LONG, Types.DOUBLE);

    static Row order(long i) {
        return Row.of("c" + (i % KEYS), i, (double) (i % 97) + 0.5);
    }

    static TreeSet<String> expected(long n) {
        TreeSet<String> s = new TreeSet<>();
        for (long i = 0; i < n; i++) {
            s.add("c" + (i % KEYS) + "/" + i + "/" + (i / KEYS + 1));
        }
        return s;
    }

    static String key(Row r) {
        return r.getField("customer") + "/" + r.getField("order_id") + "/" + r.getField("orders");
    }

    /** Asserts exactly-once: every expected row once, nothing else. */
    static void assertExactlyOnce(long n, List<Row> rows) {
        List<String> got = new ArrayList<>();
        rows.forEach(r -> got.add(key(r)));
        TreeSet<String> unique = new TreeSet<>(got);
        assertEquals(got.size(), unique.size(), "duplicates in the output");
        assertEquals(expected(n), unique);
    }

    StreamExecutionEnvironment env(int parallelism, boolean restarts) {
        Configuration conf = new Configuration();
        conf.setString("restart-strategy.type", restarts ? "fixed-delay" : "none");
        conf.setString("restart-strategy.fixed-delay.attempts", "3");
        conf.setString("restart-strategy.fixed-delay.delay", "200 ms");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(parallelism);
        env.enableCheckpointing(100);
        return env;
    }

    static KeyedStream<Row, String> orders(StreamExecutionEnvironment env, long n, double perSecond) {
        return orders(env, n, perSecond > 0 ? RateLimiterStrategy.perSecond(perSecond) : RateLimiterStrategy.noOp());
    }

    static KeyedStream<Row, String> orders(StreamExecutionEnvironment env, long n, RateLimiterStrategy<?> rate) {
        @SuppressWarnings({"unchecked", "rawtypes"})
        DataGeneratorSource<Row> source = new DataGeneratorSource<>(AgentJobTestBase::order, n, (RateLimiterStrategy) rate, INPUT);
        return env.fromSource(source,
                        WatermarkStrategy.<Row>forMonotonousTimestamps().withTimestampAssigner((r, ts) -> (Long) r.getField(1)),
                        "orders")
                .setParallelism(1)
                .uid("orders")
                .keyBy(r -> (String) r.getField(0), Types.STRING);
    }

    static List<Row> drain(CloseableIterator<Row> it) throws Exception {
        List<Row> out = new ArrayList<>();
        try (it) {
            it.forEachRemaining(out::add);
        }
        return out;
    }

    @Test
    void producesTheExpectedRows() throws Exception {
        StreamExecutionEnvironment env = env(2, false);
        DataStream<Row> out = GoAgents.connect(orders(env, 300, 0), config().batchSize(8).build());
        assertEquals(List.of("customer", "order_id", "orders", "avg_amount", "risk", "flagged"),
                List.of(((RowTypeInfo) out.getType()).getFieldNames()));
        assertExactlyOnce(300, drain(out.executeAndCollect("produces-expected-rows")));
    }

    @Test
    void killedGoProcessFailsTheTaskNamingItAndTheJobRecoversExactlyOnce(
            @InjectMiniCluster MiniCluster cluster) throws Exception {
        long n = 1000;
        StreamExecutionEnvironment env = env(2, true);
        DataStream<Row> out = GoAgents.connect(orders(env, n, 250), config().build());
        CloseableIterator<Row> it = out.collectAsync();
        JobClient job = env.executeAsync("kill-9");
        java.util.concurrent.CompletableFuture<Long> killed = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            try {
                // After two completed checkpoints, SIGKILL one Go process.
                while (completedCheckpoints(cluster, job.getJobID()) < 2) {
                    Thread.sleep(20);
                }
                ProcessHandle victim = goProcesses().stream().findFirst()
                        .orElseThrow(() -> new AssertionError("no Go process found with " + processMarker()));
                victim.destroyForcibly();
                return victim.pid();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        List<Row> rows = drain(it);
        long pid = killed.get();
        assertExactlyOnce(n, rows);
        String history = exceptionHistory(cluster, job.getJobID());
        assertTrue(history.contains("Go agent process failed") && history.contains("pid " + pid), history);
    }

    @Test
    void rescalesThroughSavepointsWithCountersContinuing(
            @InjectClusterClient ClusterClient<?> client) throws Exception {
        String name = getClass().getSimpleName() + "-rescale";
        CollectingSink.rows(name).clear();
        long n = 900;
        String savepoint = null;
        int[] parallelism = {2, 3, 1};
        int[] newRows = {120, 120, -1}; // rows each stopped phase must commit before its savepoint
        // The source emits only the rows released for the phase, so it is still running (waiting
        // for more) when the phase stops with a savepoint, however slowly the phase started.
        long[] released = {300, 300, n};
        Gate.create(name);
        for (int phase = 0; phase < 3; phase++) {
            Gate.release(name, released[phase]);
            StreamExecutionEnvironment env = env(parallelism[phase], false);
            GoAgents.connect(orders(env, n, Gate.strategy(name)), config().build()).uid("agent")
                    .sinkTo(new CollectingSink(name)).uid("sink").setParallelism(1);
            StreamGraph graph = env.getStreamGraph();
            if (savepoint != null) {
                graph.setSavepointRestoreSettings(SavepointRestoreSettings.forPath(savepoint));
            }
            JobClient job = env.executeAsync(graph);
            if (newRows[phase] < 0) {
                job.getJobExecutionResult().get();
                break;
            }
            int target = CollectingSink.rows(name).size() + newRows[phase];
            long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
            while (CollectingSink.rows(name).size() < target
                    || client.getJobStatus(job.getJobID()).get() != org.apache.flink.api.common.JobStatus.RUNNING) {
                assertTrue(System.nanoTime() < deadline, "phase " + phase + " produced too little");
                Thread.sleep(20);
            }
            savepoint = client.stopWithSavepoint(job.getJobID(), false, tmp.resolve("sp" + phase).toUri().toString(),
                    SavepointFormatType.CANONICAL).get();
        }
        assertExactlyOnce(n, CollectingSink.rows(name));
    }

    @Test
    void unsupportedInputColumnFailsAtGraphBuildNamingTheField() throws Exception {
        StreamExecutionEnvironment env = env(1, false);
        RowTypeInfo withMap = (RowTypeInfo) Types.ROW_NAMED(new String[] {"customer", "attrs"},
                Types.STRING, Types.MAP(Types.STRING, Types.STRING));
        KeyedStream<Row, String> in = env.fromData(withMap, Row.of("a", java.util.Map.of()))
                .keyBy(r -> (String) r.getField(0), Types.STRING);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> GoAgents.connect(in, config().build()));
        assertTrue(e.getMessage().contains("'attrs'"), e.getMessage());
    }

    @Test
    void missingBinaryFailsAtGraphBuild() {
        StreamExecutionEnvironment env = env(1, false);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GoAgents.connect(
                orders(env, 1, 0), GoAgentConfig.builder().binary("/nonexistent/agent").build()));
        assertTrue(e.getMessage().contains("/nonexistent/agent") && e.getMessage().contains("go.binary"), e.getMessage());
    }

    List<ProcessHandle> goProcesses() {
        List<ProcessHandle> out = new ArrayList<>();
        ProcessHandle.current().descendants().forEach(p -> {
            Optional<String> cmd = p.info().commandLine();
            if (cmd.isPresent() && cmd.get().contains(processMarker()) && !cmd.get().contains(" describe")) {
                out.add(p);
            }
        });
        return out;
    }

    static long completedCheckpoints(MiniCluster cluster, JobID job) throws Exception {
        var stats = cluster.getExecutionGraph(job).get().getCheckpointStatsSnapshot();
        return stats == null ? 0 : stats.getCounts().getNumberOfCompletedCheckpoints();
    }

    static String exceptionHistory(MiniCluster cluster, JobID job) throws Exception {
        StringBuilder b = new StringBuilder();
        for (RootExceptionHistoryEntry e : cluster.getExecutionGraphInfo(job).get().getExceptionHistory()) {
            b.append(e.getExceptionAsString()).append('\n');
        }
        return b.toString();
    }
}
