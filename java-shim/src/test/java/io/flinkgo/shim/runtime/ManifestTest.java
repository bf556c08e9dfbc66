package io.flinkgo.shim.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

class ManifestTest {
    static final String JSON = "{\"protocol\":1,\"runtime\":\"flinkgo-go/0.1.0\",\"agents\":[{\"name\":\"order-scoring\","
            + "\"actions\":[{\"name\":\"score\",\"listen\":[\"_input_event\"]}],"
            + "\"output\":[{\"name\":\"customer\",\"type\":\"STRING\"},{\"name\":\"score\",\"type\":\"DOUBLE\"}],"
            + "\"options\":[{\"name\":\"temperature\",\"default\":\"0.2\",\"doc\":\"...\"}]},"
            + "{\"name\":\"other\",\"output\":[{\"name\":\"x\",\"type\":\"INT\"}]}]}";

    @Test
    void parsesTheDocumentedShape() {
        Manifest m = Manifest.parse(JSON, "test");
        assertEquals(1, m.protocol());
        assertEquals("flinkgo-go/0.1.0", m.runtime());
        Manifest.Agent a = m.agent("order-scoring", "bin");
        assertEquals(List.of(new Manifest.Column("customer", "STRING"), new Manifest.Column("score", "DOUBLE")), a.output());
        assertEquals(List.of("temperature"), a.options());
    }

    @Test
    void agentSelection() {
        Manifest m = Manifest.parse(JSON, "test");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> m.agent(null, "bin"));
        assertTrue(e.getMessage().contains("go.agent") && e.getMessage().contains("order-scoring"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> m.agent("nope", "bin"));
        assertTrue(e.getMessage().contains("nope"), e.getMessage());
    }

    @Test
    void rejectsJunk() {
        assertThrows(IllegalArgumentException.class, () -> Manifest.parse("not json", "t"));
        assertThrows(IllegalArgumentException.class, () -> Manifest.parse("{\"protocol\":1,\"agents\":[]}", "t"));
        assertThrows(IllegalArgumentException.class, () -> Manifest.parse("{\"agents\":[{\"name\":\"a\"}]}", "t"));
    }

    @Test
    void missingBinaryIsAClearError() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Manifest.describe("/nonexistent/flinkgo-agent", 5000));
        assertTrue(e.getMessage().contains("/nonexistent/flinkgo-agent"), e.getMessage());
    }
}
