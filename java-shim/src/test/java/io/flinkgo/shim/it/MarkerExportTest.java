package io.flinkgo.shim.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import java.nio.file.Path;

import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.apache.flink.client.program.ClusterClient;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.InjectClusterClient;
import org.junit.jupiter.api.Test;

import io.flinkgo.shim.GoAgentConfig;
import io.flinkgo.shim.GoAgents;
import io.flinkgo.shim.fake.FakeBinary;
import io.flinkgo.shim.tools.MarkerExport;

/**
 * MarkerExport reads every subtask's recovery marker back from a savepoint (against the Java fake
 * of the Go side, whose markers are "fake-marker-&lt;checkpoint&gt;").
 */
class MarkerExportTest {
    @RegisterExtension
    static final MiniClusterExtension CLUSTER = new MiniClusterExtension(new MiniClusterResourceConfiguration.Builder()
            .setNumberTaskManagers(1)
            .setNumberSlotsPerTaskManager(4)
            .build());

    @TempDir
    Path tmp;

    @Test
    void readsTheMarkersOfEverySubtaskFromASavepoint(@InjectClusterClient ClusterClient<?> client) throws Exception {
        Configuration conf = new Configuration();
        conf.setString("restart-strategy.type", "none");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(2);
        env.enableCheckpointing(200);
        GoAgentConfig config = GoAgentConfig.builder().binary(FakeBinary.write(tmp, "fake-agent", Map.of()).toString()).build();
        GoAgents.connect(AgentJobTestBase.orders(env, 1_000_000, 200), config).uid("agent")
                .sinkTo(new CollectingSink("marker-export")).uid("sink").setParallelism(1);
        JobClient job = env.executeAsync("marker-export");
        long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        while (CollectingSink.rows("marker-export").size() < 50 || client.getJobStatus(job.getJobID()).get() != JobStatus.RUNNING) {
            assertTrue(System.nanoTime() < deadline, "the job produced too little");
            Thread.sleep(20);
        }
        String savepoint = client.stopWithSavepoint(job.getJobID(), false, tmp.resolve("sp").toUri().toString(),
                SavepointFormatType.CANONICAL).get();

        List<byte[]> markers = MarkerExport.read(savepoint, "agent");
        TreeSet<String> distinct = new TreeSet<>();
        for (byte[] m : markers) {
            distinct.add(new String(m, StandardCharsets.UTF_8));
        }
        assertEquals(2, markers.size(), "one marker per subtask: " + distinct);
        assertEquals(1, distinct.size(), "both subtasks' markers are of the savepoint's checkpoint: " + distinct);
        assertTrue(distinct.first().startsWith("fake-marker-"), distinct.toString());
        assertEquals("{\"marker\":\"" + java.util.Base64.getEncoder().encodeToString(markers.get(0)) + "\"}",
                MarkerExport.jsonLine(markers.get(0)));

        // As flinkgo cleanup plan --savepoint runs it: java -cp ... MarkerExport <path> <uid>; stdout
        // holds the markers' JSON lines and nothing else (Flink's log goes to stderr).
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-opens=java.base/java.util=ALL-UNNAMED", "--add-opens=java.base/java.lang=ALL-UNNAMED",
                "-cp", System.getProperty("java.class.path"), MarkerExport.class.getName(), savepoint, "agent")
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String stdout = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(2, java.util.concurrent.TimeUnit.MINUTES), "MarkerExport did not finish");
        assertEquals(0, p.exitValue(), stdout);
        List<String> lines = stdout.lines().toList();
        assertEquals(List.of(MarkerExport.jsonLine(markers.get(0)), MarkerExport.jsonLine(markers.get(1))), lines);

        Process bad = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), MarkerExport.class.getName(), savepoint, "no-such-uid")
                .redirectErrorStream(true).start();
        String out = new String(bad.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(bad.waitFor(2, java.util.concurrent.TimeUnit.MINUTES) && bad.exitValue() == 1, out);
        assertTrue(out.contains("no-such-uid"), out);
    }
}
