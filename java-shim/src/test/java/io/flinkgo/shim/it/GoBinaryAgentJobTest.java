package io.flinkgo.shim.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

import org.apache.flink.api.common.JobStatus;
import org.apache.flink.client.program.ClusterClient;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.InjectClusterClient;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flinkgo.shim.GoAgents;

import io.flinkgo.shim.GoAgentConfig;

/**
 * The job tests against the real Go binary of the order-scoring example
 * ({@code -Dflinkgo.binary=/abs/path/to/bin/orderscoring}); run with {@code mvn -Pit verify}.
 */
@Tag("go-binary")
class GoBinaryAgentJobTest extends AgentJobTestBase {
    static String binary() {
        return System.getProperty("flinkgo.binary", "");
    }

    @BeforeAll
    static void binaryIsThere() {
        String b = binary();
        assertTrue(!b.isBlank() && Files.isExecutable(Path.of(b)),
                "set -Dflinkgo.binary to the absolute path of the order-scoring binary (make builds it into bin/); got '" + b + "'");
    }

    @Override
    GoAgentConfig.Builder config() {
        return GoAgentConfig.builder().binary(binary());
    }

    @Override
    String processMarker() {
        return binary();
    }

    /**
     * stop-with-savepoint <em>with drain</em> calls endInput: the operator waits
     * until Go has finished every input it received (END_ACK) before the final
     * savepoint barrier, so every order the source emitted has its output,
     * committed once, and the job finishes.
     */
    @Test
    void stopWithSavepointAndDrainFinishesEveryInputBeforeTheSavepoint(
            @InjectClusterClient ClusterClient<?> client, @TempDir Path dir) throws Exception {
        String name = getClass().getSimpleName() + "-drain";
        CollectingSink.rows(name).clear();
        StreamExecutionEnvironment env = env(2, false);
        GoAgents.connect(orders(env, 1_000_000, 300), config().build()).uid("agent")
                .sinkTo(new CollectingSink(name)).uid("sink").setParallelism(1);
        JobClient job = env.executeAsync(env.getStreamGraph());
        long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        while (CollectingSink.rows(name).size() < 100
                || client.getJobStatus(job.getJobID()).get() != JobStatus.RUNNING) {
            assertTrue(System.nanoTime() < deadline, "too few rows before the stop");
            Thread.sleep(20);
        }
        client.stopWithSavepoint(job.getJobID(), true, dir.resolve("drained").toUri().toString(),
                SavepointFormatType.CANONICAL).get();
        job.getJobExecutionResult().get();
        assertEquals(JobStatus.FINISHED, client.getJobStatus(job.getJobID()).get());

        List<String> got = new ArrayList<>();
        CollectingSink.rows(name).forEach(r -> got.add(key(r)));
        TreeSet<String> unique = new TreeSet<>(got);
        assertEquals(got.size(), unique.size(), "duplicates in the output");
        // Orders 0..m-1 left the (single, sequential) source; all of them, and
        // nothing else, must have their output.
        assertEquals(expected(got.size()), unique, "an order emitted before the drain has no output");
    }
}
