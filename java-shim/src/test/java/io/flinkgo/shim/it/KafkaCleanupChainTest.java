package io.flinkgo.shim.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.ExceptionUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import io.flinkgo.shim.GoAgentConfig;
import io.flinkgo.shim.GoAgents;
import io.flinkgo.shim.tools.MarkerExport;

/**
 * Checkpoint-aligned cleanup of the action-state topic end to end (docs/cleanup.md): the
 * "sideeffects" agent of the real test-agent binary ({@code -Dflinkgo.testagent}) with the Kafka
 * store on a real broker ({@code -Dflinkgo.kafka}), savepoints S0 and S1, the real
 * {@code flinkgo cleanup plan --savepoint} (which runs {@link MarkerExport} with java) and
 * {@code flinkgo cleanup apply} ({@code -Dflinkgo.cli}), then a restore from S1, which continues,
 * and one from S0, which the cleanup boundary refuses. Tag {@code go-binary}: runs with
 * {@code -Pit} and fails, naming what to set, if a property is missing.
 *
 * <p>Every job runs with {@code kafkaActionStateCleanupControlTopic} set: the first starts without
 * state, so there is no marker to check against a boundary; the restores come after the apply has
 * committed one.
 */
@Tag("go-binary")
class KafkaCleanupChainTest {
    @RegisterExtension
    static final MiniClusterExtension CLUSTER = new MiniClusterExtension(new MiniClusterResourceConfiguration.Builder()
            .setNumberTaskManagers(1)
            .setNumberSlotsPerTaskManager(2)
            .build());

    static String kafka;
    static String agent;
    static String cli;

    @TempDir
    Path tmp;

    @BeforeAll
    static void properties() {
        kafka = KafkaStoreEndToEndTest.broker("KafkaCleanupChainTest");
        agent = GoBinaryEndToEndTest.binary("flinkgo.testagent", "the test-agent binary (cmd/flinkgo-testagent)");
        cli = GoBinaryEndToEndTest.binary("flinkgo.cli", "the flinkgo CLI (cmd/flinkgo)");
    }

    static final int PARTITIONS = 4;
    /** Rows before S0, before S1, in all. */
    static final long N0 = 60;
    static final long N1 = 120;
    static final long N = 180;

    static GoAgentConfig config(String topic, String control) {
        return GoAgentConfig.builder().binary(agent).set("go.agent", "sideeffects")
                .set("actionStateStoreBackend", "kafka")
                .set("kafkaBootstrapServers", kafka)
                .set("kafkaActionStateTopic", topic)
                .set("kafkaActionStateTopicNumPartitions", String.valueOf(PARTITIONS))
                .set("kafkaActionStateCleanupControlTopic", control)
                .set("kafka.delivery.timeout.ms", "3000")
                .set("go.batch.timeout.ms", "1")
                .build();
    }

    /**
     * Submits the sideeffects job (parallelism 1, no restarts) on rows 0..N-1, restored from
     * {@code savepoint} unless it is null; its output goes to {@link CommittingCollector} {@code name}.
     */
    static JobClient submit(String name, String topic, String control, Path log, RateLimiterStrategy<?> limit,
            long checkpointMs, String savepoint) throws Exception {
        StreamExecutionEnvironment env = KafkaStoreEndToEndTest.env(false, checkpointMs);
        DataStream<Row> out = GoAgents.connect(KafkaStoreEndToEndTest.rows(env, N, -1, limit, log.toString()),
                config(topic, control)).uid("agent");
        CommittingCollector.addTo(out, name);
        StreamGraph graph = env.getStreamGraph();
        if (savepoint != null) {
            graph.setSavepointRestoreSettings(SavepointRestoreSettings.forPath(savepoint));
        }
        return env.executeAsync(graph);
    }

    /** Triggers checkpoints until {@code want} rows are committed under {@code name}. */
    static void awaitCommitted(MiniCluster cluster, JobID job, String name, long want) throws Exception {
        long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        while (CommittingCollector.committed(name).size() < want) {
            assertTrue(System.nanoTime() < deadline, "only " + CommittingCollector.committed(name).size() + " of "
                    + want + " rows committed");
            cluster.triggerCheckpoint(job).get(1, TimeUnit.MINUTES);
            // The collector commits on the completion notification, which follows the future.
            long until = System.nanoTime() + Duration.ofSeconds(2).toNanos();
            while (CommittingCollector.committed(name).size() < want && System.nanoTime() < until) {
                Thread.sleep(20);
            }
        }
    }

    /** The output of one run of the flinkgo CLI. */
    record CliResult(int exit, String stdout, String stderr) {}

    CliResult flinkgo(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(cli));
        cmd.addAll(List.of(args));
        Path stdout = Files.createTempFile(tmp, "flinkgo-", ".stdout");
        Path stderr = Files.createTempFile(tmp, "flinkgo-", ".stderr");
        Process p = new ProcessBuilder(cmd).redirectOutput(stdout.toFile()).redirectError(stderr.toFile()).start();
        if (!p.waitFor(2, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new AssertionError("flinkgo " + String.join(" ", args) + " did not finish in 2 minutes:\n"
                    + Files.readString(stderr));
        }
        return new CliResult(p.exitValue(), Files.readString(stdout, StandardCharsets.UTF_8), Files.readString(stderr));
    }

    /** A plan file's members (docs/cleanup.md, "The plan"; the file is canonical JSON). */
    record Plan(String id, String topic, int partitions, long checkpointId, TreeMap<Integer, Long> offsets) {
        static Plan parse(String json) {
            Matcher m = Pattern.compile("^\\{\"version\":1,\"id\":\"([0-9a-f]{64})\",\"topic\":\"([^\"]+)\",\"topic_id\":\"[A-Za-z0-9_-]{22}\","
                    + "\"partitions\":(\\d+),\"checkpoint_id\":(\\d+),\"offsets\":\\{([^}]*)\\}\\}\n$").matcher(json);
            assertTrue(m.matches(), "not a plan file: " + json);
            TreeMap<Integer, Long> offsets = new TreeMap<>();
            Matcher o = Pattern.compile("\"(\\d+)\":(\\d+)").matcher(m.group(5));
            while (o.find()) {
                offsets.put(Integer.parseInt(o.group(1)), Long.parseLong(o.group(2)));
            }
            return new Plan(m.group(1), m.group(2), Integer.parseInt(m.group(3)), Long.parseLong(m.group(4)), offsets);
        }
    }

    /** {@code flinkgo cleanup plan --savepoint}: runs MarkerExport on the savepoint; returns the plan. */
    Plan plan(String savepoint, Path file) throws Exception {
        CliResult r = flinkgo("cleanup", "plan", "--savepoint", savepoint, "--uid", "agent",
                "--classpath", System.getProperty("java.class.path"),
                "--java", Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--bootstrap", kafka, "--out", file.toString());
        assertEquals(0, r.exit(), "flinkgo cleanup plan --savepoint " + savepoint + ":\n" + r.stderr());
        Plan p = Plan.parse(Files.readString(file));
        assertEquals("Cleanup plan " + p.id() + " written to " + file + "\n", r.stdout());
        return p;
    }

    /** The start offset of every partition of the topic, from the broker. */
    static TreeMap<Integer, Long> startOffsets(String topic) throws Exception {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka);
        try (Admin admin = Admin.create(props)) {
            Map<TopicPartition, OffsetSpec> req = new java.util.HashMap<>();
            for (int p = 0; p < PARTITIONS; p++) {
                req.put(new TopicPartition(topic, p), OffsetSpec.earliest());
            }
            TreeMap<Integer, Long> out = new TreeMap<>();
            admin.listOffsets(req).all().get(1, TimeUnit.MINUTES).forEach((tp, info) -> out.put(tp.partition(), info.offset()));
            return out;
        }
    }

    @Test
    void aCleanupAtS1KeepsS1RestorableAndRefusesS0(@InjectMiniCluster MiniCluster cluster) throws Exception {
        String name = "kafka-cleanup-chain";
        String topic = KafkaStoreEndToEndTest.topic("cleanup");
        String control = topic + "-control";
        Path log = tmp.resolve("effects.log");
        Gate.create(name);
        CommittingCollector.reset(name);

        // 1. A fresh job: rows 0..N0-1, savepoint S0; rows N0..N1-1, committed by a checkpoint,
        //    then stop with savepoint S1. Checkpoints only when triggered, so S0 still holds the
        //    records of rows 0..N0-1 and S1 (after S0 and a checkpoint completed) no longer does.
        JobClient first = submit(name, topic, control, log, Gate.strategy(name), Duration.ofHours(1).toMillis(), null);
        JobID firstId = first.getJobID();
        Gate.release(name, N0);
        KafkaStoreEndToEndTest.await("rows 0..N0-1 to finish", Duration.ofMinutes(1),
                () -> KafkaStoreEndToEndTest.hasLines(log, "charge", 0, N0));
        String s0 = cluster.triggerSavepoint(firstId, tmp.resolve("s0").toUri().toString(), false,
                SavepointFormatType.CANONICAL).get(1, TimeUnit.MINUTES);
        Gate.release(name, N1 - N0);
        awaitCommitted(cluster, firstId, name, N1);
        String s1 = cluster.stopWithSavepoint(firstId, tmp.resolve("s1").toUri().toString(), false,
                SavepointFormatType.CANONICAL).get(1, TimeUnit.MINUTES);
        first.getJobExecutionResult().get(1, TimeUnit.MINUTES);
        assertEquals(N1, CommittingCollector.committed(name).size(), "rows committed up to S1");
        System.out.println(name + ": S0 " + s0 + ", S1 " + s1);

        // 2. Plans of both savepoints (S0's only to know what it needs); nothing deleted yet.
        Plan p0 = plan(s0, tmp.resolve("plan-s0.json"));
        Plan p1 = plan(s1, tmp.resolve("plan-s1.json"));
        System.out.println(name + ": S0 needs " + p0.offsets() + " (checkpoint " + p0.checkpointId() + "), S1 needs "
                + p1.offsets() + " (checkpoint " + p1.checkpointId() + ")");
        assertEquals(topic, p1.topic());
        assertEquals(PARTITIONS, p1.partitions());
        assertTrue(p0.checkpointId() < p1.checkpointId(), "checkpoints of S0 and S1: " + p0 + " " + p1);
        Integer refused = null; // the first partition where S0 needs records below S1's boundary
        for (var e : p1.offsets().entrySet()) {
            Long need = p0.offsets().get(e.getKey());
            if (need != null && need < e.getValue()) {
                refused = e.getKey();
                break;
            }
        }
        assertTrue(refused != null, "S1's plan moves no boundary above what S0 needs: S0 " + p0 + ", S1 " + p1);
        TreeMap<Integer, Long> before = startOffsets(topic);
        assertEquals(Map.of(0, 0L, 1, 0L, 2, 0L, 3, 0L), before, "start offsets before the cleanup");

        // 3. Apply S1's plan: COMMITTED, DeleteRecords, APPLIED.
        CliResult applied = flinkgo("cleanup", "apply", "--plan", tmp.resolve("plan-s1.json").toString(),
                "--bootstrap", kafka, "--topic", topic, "--control-topic", control);
        assertEquals(0, applied.exit(), "flinkgo cleanup apply:\n" + applied.stderr());
        assertEquals("Cleanup plan " + p1.id() + " is APPLIED\n", applied.stdout());
        TreeMap<Integer, Long> after = startOffsets(topic);
        TreeMap<Integer, Long> want = new TreeMap<>(before);
        want.putAll(p1.offsets());
        assertEquals(want, after, "start offsets after the cleanup (plan " + p1.offsets() + ")");

        // 4. Restore from S1: rows N1..N-1 follow, every row is committed once, the per-key
        //    counters continue, and no side effect of rows before S1 runs again.
        JobClient restored = submit(name, topic, control, log, RateLimiterStrategy.noOp(), 200, s1);
        restored.getJobExecutionResult().get(2, TimeUnit.MINUTES);
        List<Row> committed = CommittingCollector.committed(name);
        TreeMap<Long, Row> byId = new TreeMap<>();
        for (Row r : committed) {
            assertTrue(byId.put((Long) r.getField("id"), r) == null, "row " + r + " committed twice: " + committed);
        }
        assertEquals(N, byId.size(), "committed: " + committed);
        assertEquals(0L, byId.firstKey());
        assertEquals(N - 1, byId.lastKey());
        Map<String, Long> perKey = new TreeMap<>();
        byId.forEach((i, r) -> {
            assertEquals("k" + (i % 3), r.getField("customer"), "customer of row " + r);
            long n = perKey.merge((String) r.getField("customer"), 1L, Long::sum);
            assertEquals(n, r.getField("n"), "counter of row " + r);
            assertEquals(i * 10, r.getField("call1"), "call1 of row " + r);
            assertEquals("charged", r.getField("charge"), "charge of row " + r);
        });
        Map<String, Integer> count = new TreeMap<>();
        KafkaStoreEndToEndTest.lines(log).forEach(l -> count.merge(l, 1, Integer::sum));
        List<String> wrong = new ArrayList<>();
        for (long i = 0; i < N; i++) {
            for (String step : List.of("first", "second", "call1", "charge")) {
                if (count.getOrDefault(step + " " + i, 0) != 1) {
                    wrong.add(step + " " + i + " ran " + count.getOrDefault(step + " " + i, 0) + " times");
                }
            }
        }
        assertTrue(wrong.isEmpty() && count.size() == 4 * N, "side effects: " + wrong + " " + count);

        // 5. Restore from S0: the boundary committed by S1's plan refuses it, naming the partition,
        //    the offset S0 needs and the boundary.
        String refusedName = name + "-s0";
        CommittingCollector.reset(refusedName);
        JobClient old = submit(refusedName, topic, control, tmp.resolve("effects-s0.log"), RateLimiterStrategy.noOp(),
                200, s0);
        Exception e = assertThrows(Exception.class, () -> old.getJobExecutionResult().get(2, TimeUnit.MINUTES));
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String all = ExceptionUtils.stringifyException(e);
        String expected = "topic \"" + topic + "\" partition " + refused + ": the checkpoint needs records from offset "
                + p0.offsets().get(refused) + ", below the cleanup boundary " + p1.offsets().get(refused)
                + " committed by plan " + p1.id() + " (APPLIED)";
        String message = String.valueOf(root.getMessage());
        System.out.println(name + ": restore from S0: " + message);
        assertTrue(message.contains("restore_failed") && message.contains(expected),
                "root cause " + root + "\nwant it to contain restore_failed and: " + expected + "\nwhole failure:\n" + all);
        // Its collector commits only what S0 had staged (rows restored from operator state are
        // positional: field 0 is the id); no row after S0 went through the agent.
        assertTrue(CommittingCollector.committed(refusedName).stream().allMatch(r -> (Long) r.getField(0) < N0),
                "the refused restore processed rows: " + CommittingCollector.committed(refusedName));
    }
}
