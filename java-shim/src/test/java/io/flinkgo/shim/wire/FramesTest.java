package io.flinkgo.shim.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.InputStream;

import org.junit.jupiter.api.Test;

class FramesTest {
    @Test
    void roundTrip() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Frames.write(out, FrameType.CREDIT, new byte[] {(byte) 0x81, (byte) 0xA4, 'r', 'o', 'w', 's', 0x10});
        Frames.write(out, FrameType.END_INPUT, Messages.empty());
        byte[] bytes = out.toByteArray();
        assertArrayEquals(new byte[] {0, 0, 0, 8, 0x11}, java.util.Arrays.copyOf(bytes, 5));
        InputStream in = new ByteArrayInputStream(bytes);
        Frame a = Frames.read(in, Frames.DEFAULT_MAX_FRAME);
        assertEquals(FrameType.CREDIT, a.type());
        assertEquals(16, Messages.Credit.decode(a.payload()).rows());
        Frame b = Frames.read(in, Frames.DEFAULT_MAX_FRAME);
        assertEquals(FrameType.END_INPUT, b.type());
        assertArrayEquals(Messages.empty(), b.payload());
        assertNull(Frames.read(in, Frames.DEFAULT_MAX_FRAME), "clean end of stream");
    }

    @Test
    void zeroLengthIsMalformed() {
        ProtocolException e = assertThrows(ProtocolException.class,
                () -> Frames.read(new ByteArrayInputStream(new byte[] {0, 0, 0, 0, 1}), 100));
        assertEquals(ErrorCode.MALFORMED_FRAME, e.code());
    }

    @Test
    void tooLargeIsRejectedBeforeAllocating() {
        // 0xFFFFFFF0 bytes announced, nothing behind it: must fail on the length alone.
        byte[] header = {(byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xF0, 0x10};
        ProtocolException e = assertThrows(ProtocolException.class,
                () -> Frames.read(new ByteArrayInputStream(header), Frames.DEFAULT_MAX_FRAME));
        assertEquals(ErrorCode.FRAME_TOO_LARGE, e.code());
        assertTrue(e.getMessage().contains("4294967280"), e.getMessage());
    }

    @Test
    void lengthEqualToMaximumIsAccepted() throws Exception {
        byte[] f = Frames.encode(FrameType.DATA, new byte[99]);
        assertEquals(FrameType.DATA, Frames.read(new ByteArrayInputStream(f), 100).type());
        assertThrows(ProtocolException.class, () -> Frames.read(new ByteArrayInputStream(f), 99));
    }

    @Test
    void unknownTypeIsRejected() {
        byte[] f = {0, 0, 0, 2, 0x55, (byte) 0x80};
        ProtocolException e = assertThrows(ProtocolException.class,
                () -> Frames.read(new ByteArrayInputStream(f), 100));
        assertEquals(ErrorCode.UNKNOWN_FRAME, e.code());
        assertTrue(e.getMessage().contains("0x55"));
    }

    @Test
    void truncatedFrameIsEof() {
        byte[] f = {0, 0, 0, 10, 0x10, 1, 2};
        assertThrows(EOFException.class, () -> Frames.read(new ByteArrayInputStream(f), 100));
        assertThrows(EOFException.class, () -> Frames.read(new ByteArrayInputStream(new byte[] {0, 0}), 100));
    }
}
