package io.flinkgo.shim.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.typeutils.RowTypeInfo;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.ExceptionUtils;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import io.flinkgo.shim.GoAgentConfig;
import io.flinkgo.shim.GoAgents;
import io.flinkgo.shim.GoMetrics;

/**
 * The Kafka action-state store end to end: the real test-agent binary ({@code -Dflinkgo.testagent},
 * agent "sideeffects", examples/testagents/sideeffects.go) on a MiniCluster, with the real broker
 * whose address {@code -Dflinkgo.kafka} gives ({@code testdata/kafka/kafka.sh start} prints it).
 * Tag {@code go-binary}: runs with {@code -Pit}, and then fails, naming what to set, if either
 * property is missing.
 *
 * <p>Every action body of the agent appends a line to a file named by an input column, so the
 * test sees which bodies ran and how often.
 */
@Tag("go-binary")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class KafkaStoreEndToEndTest {
    /** The operators' metrics (kept after their tasks end). */
    static final InMemoryReporter METRICS = InMemoryReporter.createWithRetainedMetrics();

    @RegisterExtension
    static final MiniClusterExtension CLUSTER = new MiniClusterExtension(new MiniClusterResourceConfiguration.Builder()
            .setConfiguration(METRICS.addToConfiguration(new Configuration()))
            .setNumberTaskManagers(1)
            .setNumberSlotsPerTaskManager(2)
            .build());

    static String kafka;
    static String agent;

    @TempDir
    Path tmp;

    @BeforeAll
    static void properties() {
        kafka = broker("KafkaStoreEndToEndTest");
        agent = GoBinaryEndToEndTest.binary("flinkgo.testagent", "the test-agent binary (cmd/flinkgo-testagent)");
    }

    /** The real broker's address from {@code -Dflinkgo.kafka}; {@code test} fails naming how to set it. */
    static String broker(String test) {
        String addr = System.getProperty("flinkgo.kafka", "");
        assertFalse(addr.isBlank(), test + " needs a real Kafka broker: start one with "
                + "FLINKGO_KAFKA=$(testdata/kafka/kafka.sh start) and pass -Dflinkgo.kafka=$FLINKGO_KAFKA to mvn -Pit "
                + "(make java-test does both)");
        return addr;
    }

    static final RowTypeInfo INPUT = (RowTypeInfo) Types.ROW_NAMED(
            new String[] {"id", "customer", "mode", "log"}, Types.LONG, Types.STRING, Types.STRING, Types.STRING);

    static final long HANG_ID = 10;

    static GoAgentConfig.Builder config(String topic) {
        return GoAgentConfig.builder().binary(agent).set("go.agent", "sideeffects")
                .set("actionStateStoreBackend", "kafka")
                .set("kafkaBootstrapServers", kafka)
                .set("kafkaActionStateTopic", topic)
                .set("kafkaActionStateTopicNumPartitions", "4")
                .set("kafka.delivery.timeout.ms", "3000")
                .set("go.batch.timeout.ms", "1");
    }

    static StreamExecutionEnvironment env(boolean restarts, long checkpointMs) {
        Configuration conf = new Configuration();
        conf.setString("restart-strategy.type", restarts ? "fixed-delay" : "none");
        conf.setString("restart-strategy.fixed-delay.attempts", "3");
        conf.setString("restart-strategy.fixed-delay.delay", "200 ms");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(1);
        env.enableCheckpointing(checkpointMs);
        return env;
    }

    /** Rows id, customer k(id % 3), mode (hang for hangId, else plain), log. */
    static KeyedStream<Row, String> rows(StreamExecutionEnvironment env, long n, long hangId, RateLimiterStrategy<?> limit,
            String log) {
        @SuppressWarnings({"unchecked", "rawtypes"})
        DataGeneratorSource<Row> source = new DataGeneratorSource<>(
                i -> Row.of(i, "k" + (i % 3), i == hangId ? "hang" : "plain", log), n, (RateLimiterStrategy) limit, INPUT);
        return env.fromSource(source, WatermarkStrategy.noWatermarks(), "rows").uid("rows")
                .keyBy(r -> (String) r.getField(1), Types.STRING);
    }

    static String topic(String test) {
        return "flinkgo-it-" + test + "-" + System.nanoTime() % 1_000_000_000L;
    }

    static List<String> lines(Path log) throws Exception {
        return Files.exists(log) ? Files.readAllLines(log) : List.of();
    }

    static void await(String what, Duration limit, BooleanSupplier done) throws Exception {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!done.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "timed out waiting for " + what);
            Thread.sleep(20);
        }
    }

    static boolean hasLines(Path log, String step, long from, long to) {
        try {
            List<String> l = lines(log);
            for (long i = from; i < to; i++) {
                if (!l.contains(step + " " + i)) {
                    return false;
                }
            }
            return true;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    static Optional<ProcessHandle> goProcess() {
        return ProcessHandle.current().descendants().filter(p -> p.info().commandLine()
                .map(c -> c.contains(agent) && !c.contains(" describe")).orElse(false)).findFirst();
    }

    /**
     * Rows 0..9 finish and checkpoint C1 completes. Then rows 10..14 come: 11, 12 and 14 finish
     * (records in Kafka), row 10 finishes action "first", records durable call "call1" and hangs
     * in the reconciled call "charge" after its pending record; row 13 waits behind it. The Go
     * process is killed before any further checkpoint: the job restores C1 and the source sends
     * rows 10..14 again. No completed action's body runs again (their records are replayed from
     * Kafka), row 10's unfinished action runs again with "call1" answered from its record and
     * "charge" reconciled, and the committed output holds every row once.
     */
    @Test
    @Order(1)
    void aFailureBetweenCheckpointsReplaysFromKafkaWithoutRepeatingSideEffects(@InjectMiniCluster MiniCluster cluster)
            throws Exception {
        String name = "kafka-e2e-replay";
        Path log = tmp.resolve("effects.log");
        long n = 20;
        Gate.create(name);
        CommittingCollector.reset(name);
        StreamExecutionEnvironment env = env(true, Duration.ofHours(1).toMillis()); // checkpoints only when triggered
        DataStream<Row> out = GoAgents.connect(rows(env, n, HANG_ID, Gate.strategy(name), log.toString()),
                config(topic("replay")).build()).uid("agent");
        CommittingCollector.addTo(out, name);
        JobClient job = env.executeAsync(name);
        JobID id = job.getJobID();
        try {
            Gate.release(name, HANG_ID);
            await("rows 0..9 to finish", Duration.ofMinutes(2), () -> hasLines(log, "charge", 0, HANG_ID));
            String c1 = cluster.triggerCheckpoint(id).get(2, TimeUnit.MINUTES);
            System.out.println(name + ": checkpoint C1 at " + c1);
            // The store's metrics reach Flink: METRICS follows the SNAPSHOT of C1, after the store's flush.
            await("the operator metric " + GoMetrics.RECORDS_WRITTEN + " > 0 after C1", Duration.ofSeconds(30),
                    () -> counter(id, GoMetrics.RECORDS_WRITTEN) > 0);
            System.out.println(name + ": " + GoMetrics.RECORDS_WRITTEN + " = " + counter(id, GoMetrics.RECORDS_WRITTEN));

            Gate.release(name, 5);
            await("rows 11, 12, 14 to finish and row 10 to hang", Duration.ofMinutes(2), () -> hasLines(log, "charge", 10, 13)
                    && hasLines(log, "charge", 14, 15));
            Thread.sleep(1500); // the completion records of rows 11, 12, 14 are acknowledged by now (group commit)
            ProcessHandle victim = goProcess().orElseThrow(() -> new AssertionError("no Go process of " + agent));
            List<String> before = lines(log);
            victim.destroyForcibly();
            System.out.println(name + ": killed Go process " + victim.pid() + " after " + before.size() + " side effects");

            Gate.release(name, 1_000_000); // the replay of rows 10..14 and rows 15..19
            long deadline = System.nanoTime() + Duration.ofMinutes(3).toNanos();
            while (!cluster.getJobStatus(id).get().isGloballyTerminalState()) {
                assertTrue(System.nanoTime() < deadline, "the job did not finish: " + lines(log));
                if (cluster.getJobStatus(id).get() == JobStatus.RUNNING) {
                    try {
                        cluster.triggerCheckpoint(id).get(30, TimeUnit.SECONDS); // the final checkpoint commits the rest
                    } catch (Exception e) {
                        // declined while restarting or finishing; try again
                    }
                }
                Thread.sleep(200);
            }
            job.getJobExecutionResult().get();
        } finally {
            Files.writeString(tmp.resolve("effects.log.release"), ""); // never leave a hung call behind
        }

        String history = AgentJobTestBase.exceptionHistory(cluster, id);
        assertTrue(history.contains("Go agent process failed"), history);

        Map<String, Integer> count = new TreeMap<>();
        lines(log).forEach(l -> count.merge(l, 1, Integer::sum));
        List<String> wrong = new ArrayList<>();
        for (long i = 0; i < n; i++) {
            boolean hung = i == HANG_ID;
            Map<String, Integer> want = Map.of("first " + i, 1, "second " + i, hung ? 2 : 1, "call1 " + i, 1,
                    "charge " + i, 1, "reconcile " + i, hung ? 1 : 0);
            want.forEach((line, times) -> {
                if (count.getOrDefault(line, 0) != times) {
                    wrong.add(line + " ran " + count.getOrDefault(line, 0) + " times, want " + times);
                }
            });
        }
        assertTrue(wrong.isEmpty(), "side effects: " + wrong + "\nlog: " + lines(log));

        List<Row> committed = CommittingCollector.committed(name);
        TreeMap<Long, Row> byId = new TreeMap<>();
        for (Row r : committed) {
            assertTrue(byId.put((Long) r.getField("id"), r) == null, "row " + r + " committed twice: " + committed);
        }
        assertEquals(n, byId.size(), "committed: " + committed);
        Map<String, Long> perKey = new TreeMap<>();
        byId.forEach((i, r) -> {
            long expectN = perKey.merge((String) r.getField("customer"), 1L, Long::sum);
            assertEquals(expectN, r.getField("n"), "counter of row " + r);
            assertEquals(i * 10, r.getField("call1"), "call1 of row " + r);
            assertEquals(i == HANG_ID ? "reconciled" : "charged", r.getField("charge"), "charge of row " + r);
        });
    }

    /**
     * The broker is stopped while the job runs: the store's writes fail, the Go process reports
     * ERROR store_failed, and the job fails (no restarts) instead of going on without its action
     * state. The broker is started again afterwards.
     */
    @Test
    @Order(2)
    void aStoppedBrokerFailsTheJobWithStoreFailed(@InjectMiniCluster MiniCluster cluster) throws Exception {
        Path script = Path.of(System.getProperty("flinkgo.testdata", "../testdata"), "kafka", "kafka.sh").toAbsolutePath();
        assertTrue(Files.isExecutable(script), "no broker script at " + script + " (set -Dflinkgo.testdata)");
        String name = "kafka-e2e-broker-stopped";
        StreamExecutionEnvironment env = env(false, 300);
        DataStream<Row> out = GoAgents.connect(rows(env, 1_000_000, -1, RateLimiterStrategy.perSecond(100),
                tmp.resolve("effects.log").toString()), config(topic("stopped")).build()).uid("agent");
        CommittingCollector.reset(name);
        CommittingCollector.addTo(out, name);
        JobClient job = env.executeAsync(name);
        try {
            await("two completed checkpoints", Duration.ofMinutes(2),
                    () -> completedCheckpoints(cluster, job.getJobID()) >= 2);
            run(script, "stop");
            long stoppedAt = System.nanoTime();
            Exception e = assertThrows(Exception.class, () -> job.getJobExecutionResult().get(3, TimeUnit.MINUTES));
            String s = ExceptionUtils.stringifyException(e) + AgentJobTestBase.exceptionHistory(cluster, job.getJobID());
            System.out.println(name + ": failed " + (System.nanoTime() - stoppedAt) / 1_000_000 + " ms after the broker stopped");
            assertTrue(s.contains("store_failed") && s.contains("Kafka action-state"), s);
            s.lines().filter(l -> l.contains("store_failed")).findFirst().ifPresent(l -> System.out.println(name + ": " + l.strip()));
        } finally {
            run(script, "start"); // as the build started it: later tests and make's stop expect it
        }
    }

    /** The largest value of the operator counter {@code name} in the job, -1 if none is registered. */
    static long counter(JobID job, String name) {
        return METRICS.findMetrics(job, "\\." + name + "$").values().stream()
                .filter(m -> m instanceof Counter).mapToLong(m -> ((Counter) m).getCount()).max().orElse(-1);
    }

    static long completedCheckpoints(MiniCluster cluster, JobID job) {
        try {
            return AgentJobTestBase.completedCheckpoints(cluster, job);
        } catch (Exception e) {
            return 0;
        }
    }

    static void run(Path script, String cmd) throws Exception {
        Process p = new ProcessBuilder(script.toString(), cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(3, TimeUnit.MINUTES) && p.exitValue() == 0, script + " " + cmd + " failed: " + out);
        System.out.println(script.getFileName() + " " + cmd + ": " + out.strip());
    }
}
