package io.flinkgo.shim.wire;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/**
 * Framing of wire protocol v1: {@code u32 BE length | u8 type | payload}, where length counts
 * the type byte and the payload.
 *
 * <p>INVARIANT: a frame whose length is 0 or above the maximum is rejected before any payload
 * buffer is allocated, so a corrupt or hostile length cannot make the JVM allocate gigabytes.
 */
public final class Frames {
    /** Default maximum frame length (type byte + payload): 64 MiB. */
    public static final int DEFAULT_MAX_FRAME = 64 << 20;

    /** Size of the header: 4 length bytes and the type byte. */
    public static final int HEADER_BYTES = 5;

    private Frames() {}

    /**
     * Reads one frame.
     *
     * @return the frame, or {@code null} on a clean end of stream (before the first byte)
     * @throws EOFException if the stream ends inside a frame
     * @throws ProtocolException if the length is 0 or above {@code maxFrame}
     *     ({@code malformed_frame} / {@code frame_too_large}) or the type is unknown
     *     ({@code unknown_frame}; its payload has been consumed)
     */
    public static Frame read(InputStream in, int maxFrame) throws IOException {
        return read(in, maxFrame, null);
    }

    /**
     * Reads one frame as {@link #read(InputStream, int)} does, taking the array of an OUTPUT
     * frame's payload from {@code pool} (if not null); every other type gets an exact array.
     */
    public static Frame read(InputStream in, int maxFrame, PayloadPool pool) throws IOException {
        int b0 = in.read();
        if (b0 < 0) {
            return null;
        }
        int b1 = in.read();
        int b2 = in.read();
        int b3 = in.read();
        if ((b1 | b2 | b3) < 0) {
            throw new EOFException("stream ended inside a frame header");
        }
        long length = ((long) b0 << 24) | (b1 << 16) | (b2 << 8) | b3;
        if (length == 0) {
            throw new ProtocolException(ErrorCode.MALFORMED_FRAME, "frame length 0 (a frame has at least its type byte)");
        }
        if (length > maxFrame) {
            throw new ProtocolException(
                    ErrorCode.FRAME_TOO_LARGE,
                    "frame length " + length + " exceeds the maximum of " + maxFrame
                            + " bytes; raise go.max.frame.bytes or lower go.batch.bytes");
        }
        int code = in.read();
        if (code < 0) {
            throw new EOFException("stream ended inside a frame header");
        }
        // One array filled in place: readNBytes(int) would read 8 KiB chunks and concatenate
        // them, copying every payload twice more.
        int n = (int) length - 1;
        byte[] payload = pool != null && code == FrameType.OUTPUT.code() ? pool.take(n) : new byte[n];
        int got = in.readNBytes(payload, 0, n);
        if (got != n) {
            throw new EOFException(
                    "stream ended inside a frame: got " + got + " of " + (length - 1) + " payload bytes");
        }
        FrameType type = FrameType.fromCode(code);
        if (type == null) {
            throw new ProtocolException(
                    ErrorCode.UNKNOWN_FRAME, String.format("unknown frame type 0x%02X (protocol version 1)", code));
        }
        return new Frame(type, payload, n);
    }

    /** Writes one frame; the caller flushes. */
    public static void write(OutputStream out, FrameType type, byte[] payload) throws IOException {
        write(out, type, payload, 0, payload.length);
    }

    /** Writes one frame from a slice of {@code payload}; the caller flushes. */
    public static void write(OutputStream out, FrameType type, byte[] payload, int off, int len)
            throws IOException {
        out.write(header(type, len));
        out.write(payload, off, len);
    }

    /** The 5 header bytes of a frame whose payload has {@code payloadLength} bytes. */
    public static byte[] header(FrameType type, int payloadLength) {
        long length = 1L + payloadLength;
        if (payloadLength < 0 || length > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("payload length out of range: " + payloadLength);
        }
        return new byte[] {
            (byte) (length >>> 24), (byte) (length >>> 16), (byte) (length >>> 8), (byte) length, (byte) type.code()
        };
    }

    /** Encodes a whole frame into one array (tests and small control frames). */
    public static byte[] encode(FrameType type, byte[] payload) {
        byte[] h = header(type, payload.length);
        byte[] all = new byte[h.length + payload.length];
        System.arraycopy(h, 0, all, 0, h.length);
        System.arraycopy(payload, 0, all, h.length, payload.length);
        return all;
    }
}
