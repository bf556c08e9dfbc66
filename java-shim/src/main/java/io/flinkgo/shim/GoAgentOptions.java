package io.flinkgo.shim;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every option the shim knows. Names shared with Apache Flink Agents mean the same thing there;
 * flinkgo's own options live under {@code go.}. Each doc names its default.
 */
public final class GoAgentOptions {
    private GoAgentOptions() {}

    // ---- Flink Agents names -------------------------------------------------------------

    public static final AgentOption<String> ACTION_STATE_STORE_BACKEND = AgentOption.choice(
            "actionStateStoreBackend", null,
            "Action-state store: 'none', 'memory' (tests) or 'kafka'. Unset (default): none, Flink checkpoints only.",
            "none", "memory", "kafka");

    public static final AgentOption<String> KAFKA_BOOTSTRAP_SERVERS = AgentOption.string(
            "kafkaBootstrapServers", "localhost:9092",
            "Kafka bootstrap servers of the action-state store. Default: localhost:9092.");

    public static final AgentOption<String> KAFKA_ACTION_STATE_TOPIC = AgentOption.string(
            "kafkaActionStateTopic", null,
            "Topic of the action-state log. No default; required when actionStateStoreBackend=kafka.");

    public static final AgentOption<Integer> KAFKA_ACTION_STATE_TOPIC_NUM_PARTITIONS = AgentOption.integer(
            "kafkaActionStateTopicNumPartitions", 64, 1, 1 << 20,
            "Partitions of the action-state topic when it is created. Default: 64.");

    public static final AgentOption<Integer> KAFKA_ACTION_STATE_TOPIC_REPLICATION_FACTOR = AgentOption.integer(
            "kafkaActionStateTopicReplicationFactor", 1, 1, Short.MAX_VALUE,
            "Replication factor of the action-state topic when it is created. Default: 1.");

    public static final AgentOption<Boolean> KAFKA_ACTION_STATE_TOMBSTONE_ENABLED = AgentOption.bool(
            "kafkaActionStateTombstoneEnabled", false,
            "Write per-key tombstones for records covered by a completed checkpoint. Default: false.");

    public static final AgentOption<String> KAFKA_ACTION_STATE_CLEANUP_CONTROL_TOPIC = AgentOption.string(
            "kafkaActionStateCleanupControlTopic", null,
            "Control topic of checkpoint-aligned cleanup. Unset (default): no aligned cleanup.");

    public static final AgentOption<String> ERROR_HANDLING_STRATEGY = AgentOption.choice(
            "error-handling-strategy", "fail",
            "What a failed action does: fail | retry | ignore. Default: fail.",
            "fail", "retry", "ignore");

    public static final AgentOption<Integer> MAX_RETRIES = AgentOption.integer(
            "max-retries", 3, 0, Integer.MAX_VALUE,
            "Retries of a failed action with error-handling-strategy=retry. Default: 3.");

    public static final AgentOption<Duration> RETRY_WAIT_INTERVAL = AgentOption.duration(
            "retry-wait-interval", Duration.ofSeconds(1),
            "First wait before a retry; doubles each time. Default: 1 s.");

    public static final AgentOption<Integer> NUM_ASYNC_THREADS = AgentOption.integer(
            "num-async-threads", null, 1, 1 << 16,
            "Actions running at once per subtask (different keys). Unset (default): 2 x the cores Go sees.");

    public static final AgentOption<String> JOB_IDENTIFIER = AgentOption.string(
            "job-identifier", null,
            "Stable identity of the job in the action-state log. Unset (default): the Flink job id.");

    // ---- flinkgo -------------------------------------------------------------------------

    public static final AgentOption<String> GO_BINARY = AgentOption.string(
            "go.binary", null,
            "The Go agent binary: an absolute path, or the name of a file registered in Flink's distributed cache. Required.");

    public static final AgentOption<String> GO_AGENT = AgentOption.string(
            "go.agent", null,
            "Name of the agent to run. Unset (default): the binary's only agent; required when it has several.");

    public static final AgentOption<Integer> GO_BATCH_SIZE = AgentOption.integer(
            "go.batch.size", 4096, 1, 1 << 24,
            "Rows per DATA batch before it is sent. Default: 4096.");

    public static final AgentOption<Long> GO_BATCH_BYTES = AgentOption.bytes(
            "go.batch.bytes", 1L << 20, 1024, 64L << 20,
            "Approximate bytes per DATA batch before it is sent. Default: 1 MiB.");

    public static final AgentOption<Long> GO_BATCH_TIMEOUT_MS = AgentOption.longValue(
            "go.batch.timeout.ms", 10L, 0, Long.MAX_VALUE,
            "Milliseconds a non-empty batch may wait before it is sent; 0 sends every record at once. Default: 10.");

    public static final AgentOption<Long> GO_CREDIT_ROWS = AgentOption.longValue(
            "go.credit.rows", 65536L, 1, Integer.MAX_VALUE,
            "In-flight window: rows the operator may send that Go has not finished (Go grants it as credit; at most"
                    + " 1024 before the first DATA, and fewer for rows larger than go.credit.bytes allows). Default: 65536.");

    public static final AgentOption<Long> GO_SOCKET_BUFFER_BYTES = AgentOption.bytes(
            "go.socket.buffer.bytes", 4L << 20, 0, 64L << 20,
            "Send buffer (SO_SNDBUF) the operator asks for on its end of the socket, so that it can write a DATA"
                    + " frame while Go is still reading the one before; the kernel caps it at net.core.wmem_max."
                    + " 0 keeps the system's default. Default: 4 MiB.");

    public static final AgentOption<Long> GO_MEMORY_LIMIT = AgentOption.bytes(
            "go.memory.limit", null, 1 << 20, Long.MAX_VALUE,
            "Soft memory limit of the Go process (GOMEMLIMIT). Unset (default): none.");

    public static final AgentOption<Long> GO_CLOSE_TIMEOUT_MS = AgentOption.longValue(
            "go.close.timeout.ms", 10_000L, 0, Long.MAX_VALUE,
            "Milliseconds to wait for the Go process to exit after CLOSE before it is killed. Default: 10000.");

    public static final AgentOption<Boolean> GO_OUTPUT_BY_REFERENCE = AgentOption.bool(
            "go.output.by.reference", true,
            "Input rows an action emits as they are come back from Go as references to the rows the operator"
                    + " sent, not as values, when the input is of Row type and equal to the output type and object"
                    + " reuse is off: the operator keeps the rows it sent until Go's horizon passes them (about one"
                    + " credit window). false: every output row comes back as values. Default: true.");

    public static final AgentOption<Long> GO_MAX_FRAME_BYTES = AgentOption.bytes(
            "go.max.frame.bytes", 64L << 20, 64 << 10, 64L << 20,
            "Largest frame either side accepts (type byte + payload), 64 KiB .. 64 MiB (protocol limit). Default: 64 MiB.");

    public static final AgentOption<Long> GO_STARTUP_TIMEOUT_MS = AgentOption.longValue(
            "go.startup.timeout.ms", 60_000L, 1, Long.MAX_VALUE,
            "Milliseconds from start of the Go process to READY (connect, handshake, restore). Default: 60000.");

    public static final AgentOption<Long> GO_BARRIER_TIMEOUT_MS = AgentOption.longValue(
            "go.barrier.timeout.ms", 600_000L, 1, Long.MAX_VALUE,
            "Milliseconds from BARRIER to the last SNAPSHOT frame before the Go process is declared hung. Default: 600000.");

    public static final AgentOption<Long> GO_END_TIMEOUT_MS = AgentOption.longValue(
            "go.end.timeout.ms", 3_600_000L, 1, Long.MAX_VALUE,
            "Milliseconds from END_INPUT to END_ACK (all actions finish) before the Go process is declared hung. Default: 3600000.");

    /** All options by name, in declaration order. */
    public static final Map<String, AgentOption<?>> ALL;

    static {
        Map<String, AgentOption<?>> m = new LinkedHashMap<>();
        for (AgentOption<?> o : List.of(
                ACTION_STATE_STORE_BACKEND, KAFKA_BOOTSTRAP_SERVERS, KAFKA_ACTION_STATE_TOPIC,
                KAFKA_ACTION_STATE_TOPIC_NUM_PARTITIONS, KAFKA_ACTION_STATE_TOPIC_REPLICATION_FACTOR,
                KAFKA_ACTION_STATE_TOMBSTONE_ENABLED, KAFKA_ACTION_STATE_CLEANUP_CONTROL_TOPIC,
                ERROR_HANDLING_STRATEGY, MAX_RETRIES, RETRY_WAIT_INTERVAL, NUM_ASYNC_THREADS, JOB_IDENTIFIER,
                GO_BINARY, GO_AGENT, GO_BATCH_SIZE, GO_BATCH_BYTES, GO_BATCH_TIMEOUT_MS, GO_CREDIT_ROWS, GO_SOCKET_BUFFER_BYTES,
                GO_MEMORY_LIMIT, GO_CLOSE_TIMEOUT_MS, GO_OUTPUT_BY_REFERENCE, GO_MAX_FRAME_BYTES, GO_STARTUP_TIMEOUT_MS,
                GO_BARRIER_TIMEOUT_MS, GO_END_TIMEOUT_MS)) {
            m.put(o.name(), o);
        }
        ALL = Collections.unmodifiableMap(m);
    }
}
