package io.flinkgo.shim.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.util.Arrays;

import org.junit.jupiter.api.Test;

class PayloadPoolTest {
    private static byte[] filled(int n, int v) {
        byte[] b = new byte[n];
        Arrays.fill(b, (byte) v);
        return b;
    }

    @Test
    void outputFramesReuseAGivenBackArrayAndCarryOnlyTheirOwnBytes() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Frames.write(out, FrameType.OUTPUT, filled(1000, 1));
        Frames.write(out, FrameType.OUTPUT, filled(600, 2));
        Frames.write(out, FrameType.CREDIT, new byte[] {(byte) 0x81, (byte) 0xA4, 'r', 'o', 'w', 's', 0x10});
        Frames.write(out, FrameType.OUTPUT, filled(1100, 3));
        InputStream in = new ByteArrayInputStream(out.toByteArray());
        PayloadPool pool = new PayloadPool(2, 1 << 20);

        Frame a = Frames.read(in, Frames.DEFAULT_MAX_FRAME, pool);
        assertEquals(1000, a.length());
        assertTrue(a.payload().length >= 1000);
        assertArrayEquals(filled(1000, 1), Arrays.copyOf(a.payload(), a.length()));
        pool.give(a.payload());

        Frame b = Frames.read(in, Frames.DEFAULT_MAX_FRAME, pool);
        assertSame(a.payload(), b.payload(), "the given-back array is reused");
        assertEquals(600, b.length());
        assertArrayEquals(filled(600, 2), Arrays.copyOf(b.payload(), b.length()));
        assertEquals("OUTPUT(600 bytes)", b.toString());
        // b is not given back (as when applying it fails): the pool is empty, nothing breaks.

        Frame c = Frames.read(in, Frames.DEFAULT_MAX_FRAME, pool);
        assertEquals(FrameType.CREDIT, c.type());
        assertEquals(c.length(), c.payload().length, "control frames get an exact array");
        assertEquals(16, Messages.Credit.decode(c.payload()).rows());

        Frame d = Frames.read(in, Frames.DEFAULT_MAX_FRAME, pool);
        assertNotSame(b.payload(), d.payload());
        assertEquals(1100, d.length());
        assertArrayEquals(filled(1100, 3), Arrays.copyOf(d.payload(), d.length()));
        assertEquals(0, pool.freeCount());
    }

    @Test
    void tooSmallArraysAreReplacedAndThePoolIsBounded() {
        PayloadPool pool = new PayloadPool(2, 4096);
        byte[] small = pool.take(100);
        pool.give(small);
        byte[] big = pool.take(1000);
        assertNotSame(small, big);
        assertTrue(big.length >= 1000);
        assertEquals(0, pool.freeCount(), "the too-small array was dropped");

        pool.give(new byte[5000]); // above maxRetained
        assertEquals(0, pool.freeCount());
        pool.give(big);
        pool.give(new byte[10]);
        pool.give(new byte[20]); // beyond capacity
        assertEquals(2, pool.freeCount());
        pool.give(null);
        assertEquals(2, pool.freeCount());
    }

    @Test
    void framesCheckTheirLength() {
        assertThrows(IllegalArgumentException.class, () -> new Frame(FrameType.OUTPUT, new byte[3], 4));
        assertThrows(IllegalArgumentException.class, () -> new Frame(FrameType.OUTPUT, new byte[3], -1));
        assertThrows(IllegalArgumentException.class, () -> new PayloadPool(0, 10));
        assertEquals(3, new Frame(FrameType.CREDIT, new byte[3]).length());
    }
}
