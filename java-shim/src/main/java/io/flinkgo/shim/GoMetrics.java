package io.flinkgo.shim;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.LongConsumer;

import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;

import io.flinkgo.shim.wire.Messages;

/**
 * The Go process's metrics as metrics of the operator's metric group (docs/java-shim.md,
 * "Metrics"). All are registered at 0 when the operator starts; every METRICS frame from Go
 * (protocol.md) sets those it names. Go sends cumulative values, so a counter is moved to the
 * value it carries; a gauge takes it. Names this shim does not know are ignored (a newer Go
 * runtime may send more). {@link #update} runs on the task thread.
 */
public final class GoMetrics {
    /** Counter: events dispatched to actions (as Flink Agents' {@code numOfEventProcessed}). */
    public static final String EVENTS_PROCESSED = "numOfEventProcessed";

    /** Counter: action bodies that ran to completion, new and re-run (Flink Agents' name). */
    public static final String ACTIONS_EXECUTED = "numOfActionsExecuted";

    /** Counter: completed actions replayed from the action-state log; their bodies did not run. */
    public static final String ACTIONS_REPLAYED = "numOfActionsReplayed";

    /** Counter: unfinished actions found in the action-state log whose bodies ran again, reusing their recorded durable calls. */
    public static final String ACTIONS_RERUN = "numOfActionsRerun";

    /** Counter: durable calls answered from the action-state log instead of running. */
    public static final String CALLS_REPLAYED = "numOfDurableCallsReplayed";

    /** Counter: action-state records acknowledged by Kafka. */
    public static final String RECORDS_WRITTEN = "actionStateRecordsWritten";

    /** Counter: key + value bytes of those records. */
    public static final String BYTES_WRITTEN = "actionStateBytesWritten";

    /** Gauge: action-state write latency (put to acknowledgement), median of the last 4096, µs. */
    public static final String WRITE_LATENCY_P50 = "actionStateWriteLatencyP50Us";

    /** Gauge: the same, 99th percentile, µs. */
    public static final String WRITE_LATENCY_P99 = "actionStateWriteLatencyP99Us";

    /** Counter: action-state records the recovery kept (this subtask's key groups). */
    public static final String RECORDS_REPLAYED = "actionStateRecordsReplayed";

    /** Counter: key + value bytes the recovery read. */
    public static final String BYTES_REPLAYED = "actionStateBytesReplayed";

    /** Gauge: wall time of the recovery (rebuilding the action state from the log), ms. */
    public static final String REBUILD_TIME = "actionStateRebuildTimeMs";

    /** Flink name by METRICS name, in the order they are registered. */
    static final Map<String, String> BY_WIRE_NAME;

    private static final Set<String> GAUGES = Set.of(WRITE_LATENCY_P50, WRITE_LATENCY_P99, REBUILD_TIME);

    static {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("events_processed", EVENTS_PROCESSED);
        m.put("actions_executed", ACTIONS_EXECUTED);
        m.put("actions_replayed", ACTIONS_REPLAYED);
        m.put("actions_rerun", ACTIONS_RERUN);
        m.put("calls_replayed", CALLS_REPLAYED);
        m.put("store_records_written", RECORDS_WRITTEN);
        m.put("store_bytes_written", BYTES_WRITTEN);
        m.put("store_write_latency_p50_us", WRITE_LATENCY_P50);
        m.put("store_write_latency_p99_us", WRITE_LATENCY_P99);
        m.put("store_records_replayed", RECORDS_REPLAYED);
        m.put("store_bytes_replayed", BYTES_REPLAYED);
        m.put("store_rebuild_ms", REBUILD_TIME);
        BY_WIRE_NAME = Collections.unmodifiableMap(m);
    }

    private final Map<String, LongConsumer> setters = new LinkedHashMap<>();

    /** Registers every metric, at 0, in {@code group}. */
    GoMetrics(MetricGroup group) {
        BY_WIRE_NAME.forEach((wire, name) -> {
            if (GAUGES.contains(name)) {
                LongGauge g = group.gauge(name, new LongGauge());
                setters.put(wire, g::set);
            } else {
                Counter c = group.counter(name);
                setters.put(wire, v -> c.inc(v - c.getCount()));
            }
        });
    }

    /** Applies a METRICS frame. */
    void update(Messages.Metrics m) {
        m.values().forEach((wire, v) -> {
            LongConsumer s = setters.get(wire);
            if (s != null) {
                s.accept(v);
            }
        });
    }

    /** A gauge set from the task thread and read by reporters. */
    static final class LongGauge implements Gauge<Long> {
        private volatile long value;

        void set(long v) {
            value = v;
        }

        @Override
        public Long getValue() {
            return value;
        }
    }
}
