package io.flinkgo.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.Test;

class GoAgentConfigTest {
    private static GoAgentConfig.Builder base() {
        return GoAgentConfig.builder().binary("/bin/true");
    }

    @Test
    void defaults() {
        GoAgentConfig c = base().build();
        assertEquals(4096, c.get(GoAgentOptions.GO_BATCH_SIZE));
        assertEquals(4L << 20, c.get(GoAgentOptions.GO_SOCKET_BUFFER_BYTES));
        assertEquals(1L << 20, c.get(GoAgentOptions.GO_BATCH_BYTES));
        assertEquals(10L, c.get(GoAgentOptions.GO_BATCH_TIMEOUT_MS));
        assertEquals("fail", c.get(GoAgentOptions.ERROR_HANDLING_STRATEGY));
        assertEquals(3, c.get(GoAgentOptions.MAX_RETRIES));
        assertEquals(Duration.ofSeconds(1), c.get(GoAgentOptions.RETRY_WAIT_INTERVAL));
        assertEquals("localhost:9092", c.get(GoAgentOptions.KAFKA_BOOTSTRAP_SERVERS));
        assertEquals(64, c.get(GoAgentOptions.KAFKA_ACTION_STATE_TOPIC_NUM_PARTITIONS));
        assertFalse(c.get(GoAgentOptions.KAFKA_ACTION_STATE_TOMBSTONE_ENABLED));
        assertNull(c.get(GoAgentOptions.ACTION_STATE_STORE_BACKEND));
        assertNull(c.get(GoAgentOptions.NUM_ASYNC_THREADS));
    }

    @Test
    void everyOptionHasADocNamingItsDefault() {
        for (AgentOption<?> o : GoAgentOptions.ALL.values()) {
            assertTrue(o.doc().contains("Default") || o.doc().contains("default") || o.doc().contains("Required")
                    || o.doc().contains("required"), o.name() + ": " + o.doc());
        }
    }

    @Test
    void typedParsingAndCanonicalWireStrings() {
        GoAgentConfig c = base()
                .set("go.batch.bytes", "2mb")
                .set("retry-wait-interval", "500 ms")
                .set("kafkaActionStateTombstoneEnabled", "TRUE")
                .set("error-handling-strategy", "Retry")
                .set("go.memory.limit", "256m")
                .build();
        Map<String, String> wire = c.toWireOptions();
        assertEquals("2097152", wire.get("go.batch.bytes"));
        assertEquals("500ms", wire.get("retry-wait-interval"));
        assertEquals("true", wire.get("kafkaActionStateTombstoneEnabled"));
        assertEquals("retry", wire.get("error-handling-strategy"));
        assertEquals("268435456", wire.get("go.memory.limit"));
        assertEquals("4096", wire.get("go.batch.size"), "defaults are passed too");
        assertFalse(wire.containsKey("num-async-threads"), "unset options without default are not passed");
    }

    @Test
    void wrongTypeNamesTheOption() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> base().set("go.batch.size", "many"));
        assertTrue(e.getMessage().contains("go.batch.size"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> base().set("go.batch.size", "0"));
        assertTrue(e.getMessage().contains("go.batch.size"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> base().set("kafkaActionStateTombstoneEnabled", "yes"));
        assertTrue(e.getMessage().contains("kafkaActionStateTombstoneEnabled"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> base().set("error-handling-strategy", "panic"));
        assertTrue(e.getMessage().contains("error-handling-strategy") && e.getMessage().contains("retry"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> base().set("retry-wait-interval", "soon"));
        assertTrue(e.getMessage().contains("retry-wait-interval"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> base().set(GoAgentOptions.MAX_RETRIES, -1));
        assertTrue(e.getMessage().contains("max-retries"), e.getMessage());
    }

    @Test
    void unknownOptionIsRejectedUnlessTheAgentDeclaresIt() {
        GoAgentConfig c = base().set("go.batch.szie", "10").set("temperature", "0.2").build();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> c.checkKnown("scoring", List.of("temperature")));
        assertTrue(e.getMessage().contains("go.batch.szie") && e.getMessage().contains("scoring"), e.getMessage());
        base().set("temperature", "0.2").build().checkKnown("scoring", List.of("temperature"));
    }

    @Test
    void crossOptionChecks() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GoAgentConfig.builder().build());
        assertTrue(e.getMessage().contains("go.binary"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> base().set("actionStateStoreBackend", "kafka").build());
        assertTrue(e.getMessage().contains("kafkaActionStateTopic"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> base().set("go.batch.bytes", "64mb").set("go.max.frame.bytes", "32mb").build());
        assertTrue(e.getMessage().contains("go.batch.bytes"), e.getMessage());
    }

    @Test
    void loadsTheAgentSectionOfTheFlinkConfiguration() {
        Configuration flink = new Configuration();
        flink.setString("agent.go.binary", "/opt/agent");
        flink.setString("agent.go.batch.size", "10");
        flink.setString("agent.max-retries", "7");
        flink.setString("taskmanager.numberOfTaskSlots", "4");
        GoAgentConfig c = GoAgentConfig.fromFlinkConfiguration(flink).build();
        assertEquals("/opt/agent", c.get(GoAgentOptions.GO_BINARY));
        assertEquals(10, c.get(GoAgentOptions.GO_BATCH_SIZE));
        assertEquals(7, c.get(GoAgentOptions.MAX_RETRIES));
        assertFalse(c.isSet("taskmanager.numberOfTaskSlots"));
    }

    @Test
    void flattensNestedYamlMaps() {
        Map<String, Object> yaml = Map.of(
                "go", Map.of("binary", "/opt/agent", "batch", Map.of("size", 16, "timeout", Map.of("ms", 5))),
                "kafkaActionStateTopicNumPartitions", 8);
        GoAgentConfig c = GoAgentConfig.fromMap(yaml).build();
        assertEquals(16, c.get(GoAgentOptions.GO_BATCH_SIZE));
        assertEquals(5L, c.get(GoAgentOptions.GO_BATCH_TIMEOUT_MS));
        assertEquals(8, c.get(GoAgentOptions.KAFKA_ACTION_STATE_TOPIC_NUM_PARTITIONS));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> GoAgentConfig.fromMap(Map.of("go", Map.of("batch", Map.of("size", "x")))));
        assertTrue(e.getMessage().contains("go.batch.size"), e.getMessage());
    }

    @Test
    void isSerializable() throws Exception {
        GoAgentConfig c = base().batchSize(7).build();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream o = new ObjectOutputStream(bytes)) {
            o.writeObject(c);
        }
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
            assertEquals(c, in.readObject());
        }
    }
}
