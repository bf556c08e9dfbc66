package io.flinkgo.shim.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

class MessagesTest {
    private static byte[] hex(String s) {
        return HexFormat.of().parseHex(s.replace(" ", ""));
    }

    @Test
    void canonicalEncodingOfSmallFrames() {
        // {"rows": 16} : fixmap(1), fixstr "rows", positive fixint
        assertArrayEquals(hex("81 a4 726f7773 10"), new Messages.Credit(16).encode());
        // {"ts": 1000}: uint16
        assertArrayEquals(hex("81 a2 7473 cd 03e8"), new Messages.WatermarkTs(1000).encode());
        // {"ts": -1}: negative fixint
        assertArrayEquals(hex("81 a2 7473 ff"), new Messages.WatermarkTs(-1).encode());
        // {"checkpoint_id": 300}
        assertArrayEquals(hex("81 ad 636865636b706f696e745f6964 cd 012c"), new Messages.CheckpointId(300).encode());
        // {"key_group": 5, "section": bin8[2]}
        assertArrayEquals(hex("82 a9 6b65795f67726f7570 05 a7 73656374696f6e c4 02 0102"),
                new Messages.Restore(5, new byte[] {1, 2}).encode());
        assertArrayEquals(hex("80"), Messages.empty());
    }

    @Test
    void helloRoundTrip() throws Exception {
        Messages.Hello h = new Messages.Hello(1, "ab".repeat(32), "flinkgo-go/0.1.0", List.of("a", "b"));
        Messages.Hello d = Messages.Hello.decode(h.encode());
        assertEquals(h, d);
    }

    @Test
    void openRoundTripWithSortedOptions() throws Exception {
        Messages.Open o = new Messages.Open("agent", Map.of("z", "1", "a", "2"), "job", "op", 1, 2, 128, 64, 127, 0,
                new byte[] {9}, 1 << 20);
        Messages.Open d = Messages.Open.decode(o.encode());
        assertEquals(List.of("a", "z"), List.copyOf(d.options().keySet()));
        assertEquals(o.agent(), d.agent());
        assertEquals(127, d.keyGroupEnd());
        assertEquals(1 << 20, d.maxFrame());
        assertArrayEquals(new byte[] {9}, d.inputSchema());
        Messages.Open noMax = new Messages.Open("agent", Map.of(), "job", "op", 0, 1, 128, 0, 127, 0, new byte[0], 0);
        assertEquals(0, Messages.Open.decode(noMax.encode()).maxFrame());
        assertArrayEquals(noMax.encode(), Messages.Open.decode(noMax.encode()).encode());
        assertFalse(Messages.Open.decode(noMax.encode()).outputRefs());
        Messages.Open refs = new Messages.Open("agent", Map.of(), "job", "op", 0, 1, 128, 0, 127, 0, new byte[0], 0, true);
        assertTrue(Messages.Open.decode(refs.encode()).outputRefs());
    }

    @Test
    void creditWithTheHorizonAndOutputRef() throws Exception {
        assertEquals(new Messages.Credit(7, 1L << 40), Messages.Credit.decode(new Messages.Credit(7, 1L << 40).encode()));
        assertEquals(0, Messages.Credit.decode(new Messages.Credit(7).encode()).keepFrom());
        long[] runs = {0, 1, 7, 4096, Long.MAX_VALUE - 9, 9};
        assertArrayEquals(runs, Messages.OutputRef.decode(new Messages.OutputRef(runs).encode()).runs());
        for (long[] bad : new long[][] {{}, {1, 2, 3}, {4, 0}, {-1, 3}, {Long.MAX_VALUE - 1, 5}, {0, 1L << 31}}) {
            ProtocolException e = assertThrows(ProtocolException.class,
                    () -> Messages.OutputRef.decode(new Messages.OutputRef(bad).encode()));
            assertEquals(ErrorCode.MALFORMED_FRAME, e.code(), java.util.Arrays.toString(bad));
        }
    }

    @Test
    void optionsAreSortedByUtf8Bytes() throws Exception {
        // U+FF21 sorts before U+1F600 in UTF-8/code points, after it in UTF-16 units.
        Messages.Open o = new Messages.Open("a", Map.of("\uD83D\uDE00", "1", "\uFF21", "2", "b", "3"), "j", "o", 0, 1, 1, 0,
                0, 0, new byte[0], 0);
        assertEquals(List.of("b", "\uFF21", "\uD83D\uDE00"), List.copyOf(Messages.Open.decode(o.encode()).options().keySet()));
    }

    @Test
    void snapshotRoundTripAndMarkerRule() throws Exception {
        Messages.Snapshot part = new Messages.Snapshot(7, List.of(new Messages.Section(3, new byte[] {1})), null, false);
        Messages.Snapshot d = Messages.Snapshot.decode(part.encode());
        assertNull(d.marker());
        assertEquals(3, d.sections().get(0).keyGroup());
        Messages.Snapshot last = new Messages.Snapshot(7, List.of(), new byte[] {4, 2}, true);
        assertArrayEquals(new byte[] {4, 2}, Messages.Snapshot.decode(last.encode()).marker());
        Messages.Snapshot noMarker = new Messages.Snapshot(7, List.of(), null, true);
        ProtocolException e = assertThrows(ProtocolException.class, () -> Messages.Snapshot.decode(noMarker.encode()));
        assertEquals(ErrorCode.MALFORMED_FRAME, e.code());
    }

    @Test
    void anyIntegerWidthAndUnknownKeysAreAccepted() throws Exception {
        MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
        p.packMapHeader(2);
        p.packString("future");
        p.packArrayHeader(0);
        p.packString("rows");
        // int64 encoding of 5 (not the shortest): still fine to read
        p.addPayload(hex("d3 0000000000000005"));
        assertEquals(5, Messages.Credit.decode(p.toByteArray()).rows());
    }

    @Test
    void missingKeyAndWrongTypeAreMalformed() {
        ProtocolException e = assertThrows(ProtocolException.class, () -> Messages.Credit.decode(hex("80")));
        assertEquals(ErrorCode.MALFORMED_FRAME, e.code());
        assertTrue(e.getMessage().contains("rows"), e.getMessage());
        e = assertThrows(ProtocolException.class, () -> Messages.Credit.decode(hex("81 a4 726f7773 a1 78")));
        assertTrue(e.getMessage().contains("STRING"), e.getMessage());
        e = assertThrows(ProtocolException.class, () -> Messages.Credit.decode(hex("93 01 02 03")));
        assertEquals(ErrorCode.MALFORMED_FRAME, e.code());
        e = assertThrows(ProtocolException.class, () -> Messages.Credit.decode(hex("81 a4 726f7773 10 10")));
        assertTrue(e.getMessage().contains("trailing"), e.getMessage());
        e = assertThrows(ProtocolException.class, () -> Messages.Credit.decode(hex("c1")));
        assertEquals(ErrorCode.MALFORMED_FRAME, e.code());
    }

    @Test
    void metricsAreSortedByUtf8BytesAndDecodeLeniently() throws Exception {
        Messages.Metrics m = new Messages.Metrics(Map.of("b", 1L, "a", 200L, "\uFF21", -1L, "\uD83D\uDE00", 0L));
        // {"a": uint8 200, "b": 1, "Ａ": -1, "😀": 0}
        assertArrayEquals(hex("84 a1 61 cc c8 a1 62 01 a3 efbca1 ff a4 f09f9880 00"), m.encode());
        assertEquals(m.values(), Messages.Metrics.decode(m.encode()).values());
        // Any order, any integer width.
        Messages.Metrics d = Messages.Metrics.decode(hex("82 a1 7a d3 0000000000000007 a1 61 cc c8"));
        assertEquals(Map.of("z", 7L, "a", 200L), d.values());
        assertArrayEquals(hex("82 a1 61 cc c8 a1 7a 07"), d.encode());
        assertEquals(Map.of(), Messages.Metrics.decode(hex("80")).values());
    }

    @Test
    void malformedMetricsAreProtocolErrors() {
        for (String[] c : new String[][] {
                {"81 a1 78 a1 31", "metric x is a STRING"},            // {"x": "1"}
                {"81 a1 78 cb 3ff8000000000000", "metric x is a FLOAT"}, // {"x": 1.5}
                {"81 a1 78 cf ffffffffffffffff", "int64 range"},       // uint64 max
                {"82 a1 78 01 a1 78 02", "duplicate key x"},
                {"81 01 01", "not a string"},
                {"91 01", "want a map"},
                {"81 a1 78 01 01", "trailing"}}) {
            ProtocolException e = assertThrows(ProtocolException.class, () -> Messages.Metrics.decode(hex(c[0])), c[0]);
            assertEquals(ErrorCode.MALFORMED_FRAME, e.code());
            assertTrue(e.getMessage().contains("METRICS") && e.getMessage().contains(c[1]), e.getMessage());
        }
    }

    @Test
    void errorFrameRoundTrip() throws Exception {
        Messages.Error e = new Messages.Error(ErrorCode.VERSION_MISMATCH, "shim 1, go 2");
        assertEquals(e, Messages.Error.decode(e.encode()));
        assertEquals(ErrorCode.VERSION_MISMATCH, ErrorCode.fromWire(e.code()));
        assertEquals(ErrorCode.INTERNAL, ErrorCode.fromWire("something_new"));
    }
}
