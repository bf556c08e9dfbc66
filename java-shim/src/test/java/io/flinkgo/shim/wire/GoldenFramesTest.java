package io.flinkgo.shim.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/**
 * Reads the golden frames in testdata/wire/ (written by the Go side) and checks the decoded
 * values and that the Java encoder reproduces every control frame byte for byte.
 */
class GoldenFramesTest {
    static Path dir() {
        String base = System.getProperty("flinkgo.testdata", "../testdata");
        return Path.of(base, "wire");
    }

    static Frame read(String name) throws Exception {
        byte[] bytes = Files.readAllBytes(dir().resolve(name));
        ByteArrayInputStream in = new ByteArrayInputStream(bytes);
        Frame f = Frames.read(in, Frames.DEFAULT_MAX_FRAME);
        assertEquals(0, in.available(), name + ": bytes after the frame");
        assertArrayEquals(bytes, Frames.encode(f.type(), f.payload()), name + ": frame header");
        return f;
    }

    private static byte[] range(int from, int to) {
        byte[] b = new byte[to - from];
        for (int i = from; i < to; i++) {
            b[i - from] = (byte) i;
        }
        return b;
    }

    @Test
    void hello() throws Exception {
        Frame f = read("hello.bin");
        assertEquals(FrameType.HELLO, f.type());
        Messages.Hello h = Messages.Hello.decode(f.payload());
        assertEquals(1, h.version());
        assertEquals("00112233445566778899aabbccddeeff".repeat(2), h.token());
        assertEquals("flinkgo-go/0.1.0", h.runtime());
        assertEquals(List.of("order-scoring", "fraud-check"), h.agents());
        assertArrayEquals(f.payload(), h.encode());
    }

    @Test
    void open() throws Exception {
        Frame f = read("open.bin");
        assertEquals(FrameType.OPEN, f.type());
        Messages.Open o = Messages.Open.decode(f.payload());
        assertEquals("order-scoring", o.agent());
        assertEquals(Map.of("error-handling-strategy", "retry", "go.batch.size", "1024", "max-retries", "3"), o.options());
        assertEquals("a1b2c3d4e5f60718293a4b5c6d7e8f90", o.jobId());
        assertEquals(1, o.subtask());
        assertEquals(4, o.parallelism());
        assertEquals(128, o.maxParallelism());
        assertEquals(32, o.keyGroupStart());
        assertEquals(63, o.keyGroupEnd());
        assertEquals(2, o.attempt());
        assertArrayEquals(f.payload(), o.encode());
    }

    @Test
    void restoreAndRestoreDone() throws Exception {
        Frame f = read("restore.bin");
        Messages.Restore r = Messages.Restore.decode(f.payload());
        assertEquals(40, r.keyGroup());
        assertArrayEquals(range(0, 32), r.section());
        assertArrayEquals(f.payload(), r.encode());

        f = read("restore_done.bin");
        Messages.RestoreDone d = Messages.RestoreDone.decode(f.payload());
        assertEquals(3, d.markers().size());
        assertEquals("marker-0", new String(d.markers().get(0), StandardCharsets.UTF_8));
        assertEquals(0, d.markers().get(1).length);
        assertArrayEquals(f.payload(), d.encode());
    }

    @Test
    void ready() throws Exception {
        Frame f = read("ready.bin");
        Messages.Ready r = Messages.Ready.decode(f.payload());
        assertTrue(r.credit() > 0);
        assertArrayEquals(Files.readAllBytes(dir().resolve("output_schema.arrow")), r.outputSchema());
        assertArrayEquals(f.payload(), r.encode());
    }

    @Test
    void smallControlFrames() throws Exception {
        assertEquals(1024, Messages.Credit.decode(read("credit.bin").payload()).rows());
        assertEquals(7, Messages.CheckpointId.decode(FrameType.BARRIER, read("barrier.bin").payload()).checkpointId());
        assertEquals(300, Messages.CheckpointId.decode(FrameType.CHECKPOINT_COMPLETE, read("checkpoint_complete.bin").payload())
                .checkpointId());
        assertEquals(200, Messages.CheckpointId.decode(FrameType.CHECKPOINT_ABORTED, read("checkpoint_aborted.bin").payload())
                .checkpointId());
        assertEquals(1_700_000_000_000L, Messages.WatermarkTs.decode(FrameType.WATERMARK, read("watermark.bin").payload()).ts());
        assertEquals(-2000, Messages.WatermarkTs.decode(FrameType.WATERMARK, read("watermark_negative.bin").payload()).ts());
        assertEquals(Long.MIN_VALUE, Messages.WatermarkTs.decode(FrameType.WM_ACK, read("wm_ack.bin").payload()).ts());
        for (String name : List.of("credit.bin", "barrier.bin", "checkpoint_complete.bin", "checkpoint_aborted.bin",
                "watermark.bin", "watermark_negative.bin", "wm_ack.bin")) {
            Frame f = read(name);
            byte[] again;
            switch (f.type()) {
                case CREDIT: again = Messages.Credit.decode(f.payload()).encode(); break;
                case WATERMARK:
                case WM_ACK: again = Messages.WatermarkTs.decode(f.type(), f.payload()).encode(); break;
                default: again = Messages.CheckpointId.decode(f.type(), f.payload()).encode();
            }
            assertArrayEquals(f.payload(), again, name);
        }
        for (String name : List.of("end_input.bin", "end_ack.bin", "close.bin")) {
            Frame f = read(name);
            Messages.decodeEmpty(f.type(), f.payload());
            assertArrayEquals(Messages.empty(), f.payload(), name);
        }
        assertEquals(FrameType.END_INPUT, read("end_input.bin").type());
        assertEquals(FrameType.END_ACK, read("end_ack.bin").type());
        assertEquals(FrameType.CLOSE, read("close.bin").type());
    }

    @Test
    void snapshots() throws Exception {
        Frame f = read("snapshot.bin");
        Messages.Snapshot s = Messages.Snapshot.decode(f.payload());
        assertEquals(7, s.checkpointId());
        assertTrue(s.last());
        assertEquals(2, s.sections().size());
        assertEquals(33, s.sections().get(0).keyGroup());
        assertArrayEquals(range(0x20, 0x30), s.sections().get(0).section());
        assertEquals(63, s.sections().get(1).keyGroup());
        assertEquals(0, s.sections().get(1).section().length);
        assertTrue(s.marker() != null);
        assertArrayEquals(f.payload(), s.encode());

        f = read("snapshot_part.bin");
        Messages.Snapshot p = Messages.Snapshot.decode(f.payload());
        assertFalse(p.last());
        assertNull(p.marker());
        assertEquals(32, p.sections().get(0).keyGroup());
        assertArrayEquals(range(0x10, 0x20), p.sections().get(0).section());
        assertArrayEquals(f.payload(), p.encode());
    }

    @Test
    void metrics() throws Exception {
        Frame f = read("metrics.bin");
        assertEquals(FrameType.METRICS, f.type());
        Messages.Metrics m = Messages.Metrics.decode(f.payload());
        Map<String, Long> want = new java.util.TreeMap<>(Map.ofEntries(
                Map.entry("events_processed", 2400L), Map.entry("actions_executed", 1200L),
                Map.entry("actions_replayed", 3L), Map.entry("actions_rerun", 1L), Map.entry("calls_replayed", 0L),
                Map.entry("store_records_written", 70000L), Map.entry("store_bytes_written", 5_000_000_000L),
                Map.entry("store_write_latency_p50_us", 850L), Map.entry("store_write_latency_p99_us", 12000L),
                Map.entry("store_records_replayed", 42L), Map.entry("store_bytes_replayed", 9000L),
                Map.entry("store_rebuild_ms", 250L)));
        assertEquals(want, new java.util.TreeMap<>(m.values()));
        // In the file's order: sorted by name.
        assertEquals(List.copyOf(want.keySet()), List.copyOf(m.values().keySet()));
        assertArrayEquals(f.payload(), m.encode());
    }

    @Test
    void error() throws Exception {
        Frame f = read("error.bin");
        Messages.Error e = Messages.Error.decode(f.payload());
        assertEquals(ErrorCode.VERSION_MISMATCH, ErrorCode.fromWire(e.code()));
        assertTrue(e.message().contains("protocol 2") && e.message().contains("protocol 1"), e.message());
        assertArrayEquals(f.payload(), e.encode());
    }

    @Test
    void dataFramesCarryTheGoldenBatches() throws Exception {
        Frame d = read("data.bin");
        assertEquals(FrameType.DATA, d.type());
        assertArrayEquals(Files.readAllBytes(dir().resolve("input_batch.arrow")), d.payload());
        Frame o = read("output.bin");
        assertEquals(FrameType.OUTPUT, o.type());
        assertArrayEquals(Files.readAllBytes(dir().resolve("output_batch.arrow")), o.payload());
    }
}
