package io.flinkgo.shim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.SimpleCounter;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.junit.jupiter.api.Test;

import io.flinkgo.shim.wire.Frames;
import io.flinkgo.shim.wire.Messages;

class GoMetricsTest {
    /** A metric group that keeps what is registered in it. */
    static final class CapturingGroup extends UnregisteredMetricsGroup {
        final Map<String, Metric> metrics = new LinkedHashMap<>();

        @Override
        public Counter counter(String name) {
            return counter(name, new SimpleCounter());
        }

        @Override
        public <C extends Counter> C counter(String name, C counter) {
            metrics.put(name, counter);
            return counter;
        }

        @Override
        public <T, G extends Gauge<T>> G gauge(String name, G gauge) {
            metrics.put(name, gauge);
            return gauge;
        }

        long value(String name) {
            Metric m = metrics.get(name);
            return m instanceof Counter ? ((Counter) m).getCount() : (Long) ((Gauge<?>) m).getValue();
        }

        Map<String, Long> values() {
            Map<String, Long> out = new TreeMap<>();
            metrics.keySet().forEach(n -> out.put(n, value(n)));
            return out;
        }
    }

    static Messages.Metrics golden() throws Exception {
        byte[] b = Files.readAllBytes(Path.of(System.getProperty("flinkgo.testdata", "../testdata"), "wire", "metrics.bin"));
        byte[] payload = java.util.Arrays.copyOfRange(b, Frames.HEADER_BYTES, b.length);
        return Messages.Metrics.decode(payload);
    }

    @Test
    void registersEveryMetricAtZeroWithItsKind() {
        CapturingGroup g = new CapturingGroup();
        new GoMetrics(g);
        assertEquals(12, g.metrics.size(), g.metrics.keySet().toString());
        g.values().forEach((n, v) -> assertEquals(0L, v, n));
        for (String c : new String[] {GoMetrics.EVENTS_PROCESSED, GoMetrics.ACTIONS_EXECUTED, GoMetrics.ACTIONS_REPLAYED,
                GoMetrics.ACTIONS_RERUN, GoMetrics.CALLS_REPLAYED, GoMetrics.RECORDS_WRITTEN, GoMetrics.BYTES_WRITTEN, GoMetrics.RECORDS_REPLAYED,
                GoMetrics.BYTES_REPLAYED}) {
            assertInstanceOf(Counter.class, g.metrics.get(c), c);
        }
        for (String c : new String[] {GoMetrics.WRITE_LATENCY_P50, GoMetrics.WRITE_LATENCY_P99, GoMetrics.REBUILD_TIME}) {
            assertInstanceOf(Gauge.class, g.metrics.get(c), c);
        }
    }

    /** The golden frame holds every name the Go runtime sends; each becomes a Flink metric. */
    @Test
    void theGoldenFrameSetsEveryMetric() throws Exception {
        Messages.Metrics m = golden();
        assertEquals(m.values().keySet(), GoMetrics.BY_WIRE_NAME.keySet(), "names of testdata/wire/metrics.bin");
        CapturingGroup g = new CapturingGroup();
        new GoMetrics(g).update(m);
        Map<String, Long> want = new TreeMap<>(Map.ofEntries(
                Map.entry("numOfEventProcessed", 2400L), Map.entry("numOfActionsExecuted", 1200L),
                Map.entry("numOfActionsReplayed", 3L), Map.entry("numOfActionsRerun", 1L),
                Map.entry("numOfDurableCallsReplayed", 0L),
                Map.entry("actionStateRecordsWritten", 70000L), Map.entry("actionStateBytesWritten", 5_000_000_000L),
                Map.entry("actionStateWriteLatencyP50Us", 850L), Map.entry("actionStateWriteLatencyP99Us", 12000L),
                Map.entry("actionStateRecordsReplayed", 42L), Map.entry("actionStateBytesReplayed", 9000L),
                Map.entry("actionStateRebuildTimeMs", 250L)));
        assertEquals(want, g.values());
    }

    @Test
    void laterFramesSetTheValuesTheyNameAndUnknownNamesAreIgnored() {
        CapturingGroup g = new CapturingGroup();
        GoMetrics gm = new GoMetrics(g);
        gm.update(new Messages.Metrics(Map.of("actions_executed", 10L, "store_write_latency_p99_us", 900L)));
        Map<String, Long> next = new HashMap<>();
        next.put("actions_executed", 25L);
        next.put("store_write_latency_p99_us", 400L);
        next.put("some_future_metric", 7L);
        next.put("numOfActionsExecuted", 99L); // a Flink name is not a METRICS name
        gm.update(new Messages.Metrics(next));
        assertEquals(25L, g.value(GoMetrics.ACTIONS_EXECUTED)); // counters follow Go's cumulative value
        assertEquals(400L, g.value(GoMetrics.WRITE_LATENCY_P99)); // gauges take the latest
        assertEquals(0L, g.value(GoMetrics.RECORDS_WRITTEN)); // not named: unchanged
        assertEquals(12, g.metrics.size(), g.metrics.keySet().toString());
    }
}
