package io.flinkgo.shim.it;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;

import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.types.Row;
import org.apache.flink.util.ExceptionUtils;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.junit.jupiter.api.Test;

import io.flinkgo.shim.GoAgentConfig;
import io.flinkgo.shim.GoAgents;
import io.flinkgo.shim.fake.FakeBinary;

/** The job tests against the Java fake of the Go side, plus failure modes only a fake can play. */
class FakeAgentJobTest extends AgentJobTestBase {
    @Override
    GoAgentConfig.Builder config() throws Exception {
        return GoAgentConfig.builder().binary(FakeBinary.write(tmp, "fake-agent", Map.of()).toString());
    }

    @Override
    String processMarker() {
        return FakeBinary.MARKER;
    }

    private GoAgentConfig.Builder fake(Map<String, String> env) throws Exception {
        return GoAgentConfig.builder().binary(FakeBinary.write(tmp, "fake-" + env.hashCode(), env).toString());
    }

    /**
     * Runs {@code rows} orders ({@code delayMs} apart) through the agent of {@code config} on one
     * subtask, and returns the job's failure with its causes; fails if the job does not fail.
     */
    private String failureOf(int rows, int delayMs, GoAgentConfig config) {
        StreamExecutionEnvironment env = env(1, false);
        DataStream<Row> out = GoAgents.connect(orders(env, rows, delayMs), config);
        Exception e = assertThrows(Exception.class, () -> drain(out.executeAndCollect()));
        return ExceptionUtils.stringifyException(e);
    }

    @Test
    void errorFrameFailsTheTaskWithTheGoMessage() throws Exception {
        String s = failureOf(200, 0, fake(Map.of("FAKE_MODE", "error_after", "FAKE_N", "50")).build());
        assertTrue(s.contains("Go agent process failed") && s.contains("action_failed")
                && s.contains("failed on purpose") && s.contains("pid "), s);
    }

    @Test
    void versionMismatchFailsWithBothVersions() throws Exception {
        String s = failureOf(10, 0, fake(Map.of("FAKE_MODE", "bad_version")).build());
        assertTrue(s.contains("version_mismatch") && s.contains("protocol 2") && s.contains("protocol 1"), s);
    }

    @Test
    void badTokenFails() throws Exception {
        String s = failureOf(10, 0, fake(Map.of("FAKE_MODE", "bad_token")).build());
        assertTrue(s.contains("bad_token"), s);
    }

    @Test
    void outputSchemaDifferentFromTheManifestFails() throws Exception {
        String s = failureOf(10, 0, fake(Map.of("FAKE_MODE", "bad_output_schema")).build());
        assertTrue(s.contains("bad_schema") && s.contains("orders"), s);
    }

    @Test
    void slowActionsDoNotStallCheckpoints(@InjectMiniCluster MiniCluster cluster) throws Exception {
        String name = "slow";
        CollectingSink.rows(name).clear();
        StreamExecutionEnvironment env = env(1, false);
        // Inputs arrive for 4 s and every one takes 3 s: a barrier that waited for running
        // actions would allow one or two checkpoints; a cut allows one every interval.
        GoAgents.connect(orders(env, 40, 10), fake(Map.of("FAKE_SLOW_MS", "3000")).build())
                .sinkTo(new CollectingSink(name));
        long start = System.nanoTime();
        JobClient job = env.executeAsync("slow");
        job.getJobExecutionResult().get();
        double seconds = (System.nanoTime() - start) / 1e9;
        long cps = cluster.getArchivedExecutionGraph(job.getJobID()).get()
                .getCheckpointStatsSnapshot().getCounts().getNumberOfCompletedCheckpoints();
        assertTrue(cps >= 8, cps + " checkpoints in " + seconds + " s");
        assertExactlyOnce(40, CollectingSink.rows(name));
    }

    @Test
    void aProcessThatNeverAnswersABarrierIsKilledAfterTheTimeout() throws Exception {
        String s = failureOf(100, 20, fake(Map.of("FAKE_MODE", "hang_on_barrier")).set("go.barrier.timeout.ms", "1000").build());
        assertTrue(s.contains("no SNAPSHOT for checkpoint") && s.contains("go.barrier.timeout.ms") && s.contains("killed"), s);
    }

    @Test
    void aMetricsFrameThatDoesNotDecodeIsAProtocolViolation() throws Exception {
        // 4 s of input, checkpoints every 100 ms: the fake's METRICS after the first snapshot is malformed.
        String s = failureOf(200, 50, fake(Map.of("FAKE_MODE", "bad_metrics")).build());
        assertTrue(s.contains("protocol violation: malformed_frame: METRICS") && s.contains("actions_executed"), s);
    }

    @Test
    void anOutputRefTheOperatorDidNotOfferIsAProtocolViolation() throws Exception {
        String s = failureOf(50, 0, fake(Map.of("FAKE_MODE", "stray_output_ref")).build());
        assertTrue(s.contains("protocol violation: unexpected_frame") && s.contains("OUTPUT_REF, but OPEN did not offer output_refs"), s);
    }

    @Test
    void unknownOptionFailsAtGraphBuild() throws Exception {
        StreamExecutionEnvironment env = env(1, false);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GoAgents.connect(
                orders(env, 1, 0), config().set("go.batch.szie", "3").build()));
        assertTrue(e.getMessage().contains("go.batch.szie"), e.getMessage());
        GoAgents.connect(orders(env, 1, 0), config().set("fake.option", "y").build()); // declared by the agent
    }
}
