package io.flinkgo.shim.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

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
}
