package io.flinkgo.shim.runtime;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.List;

import io.flinkgo.shim.wire.Frame;
import io.flinkgo.shim.wire.FrameType;
import io.flinkgo.shim.wire.Frames;
import io.flinkgo.shim.wire.PayloadPool;

/**
 * A connected socket as a frame reader (one thread) and a frame writer (another thread).
 *
 * <p>Design note: {@code Channels.newInputStream/newOutputStream} on a socket channel take the
 * channel's blocking lock for every read and write, so a reader blocked in {@code read} would
 * stall every write; these streams call the channel directly, which allows one concurrent reader
 * and one writer.
 */
public final class Channel implements AutoCloseable {
    private final SocketChannel ch;
    private final InputStream in;
    private final OutputStream out;
    private final int maxFrame;

    /**
     * @param sendBuffer the SO_SNDBUF to ask for, or 0 for the system's default. Design note: with
     *     the default (about 100 KiB) a DATA frame of 1024 200-byte rows did not fit, and the task
     *     thread sat in the write until Go had read most of it: about half its time in a job at
     *     p=1, with neither side's CPU busy. A buffer of a few frames lets it go on with the next
     *     batch; the credit window still bounds what is in flight.
     * @throws IOException if the buffer cannot be set; {@code ch} is left to the caller to close,
     *     as on {@link IllegalArgumentException}
     */
    public Channel(SocketChannel ch, int maxFrame, int sendBuffer) throws IOException {
        this.ch = ch;
        this.maxFrame = maxFrame;
        if (sendBuffer < 0) {
            throw new IllegalArgumentException("socket send buffer must be >= 0 bytes, got " + sendBuffer);
        }
        if (sendBuffer > 0) {
            try {
                ch.setOption(StandardSocketOptions.SO_SNDBUF, sendBuffer);
            } catch (IOException e) {
                throw new IOException("setting the socket's send buffer to " + sendBuffer + " bytes (go.socket.buffer.bytes) failed: "
                        + e.getMessage() + "; set it to 0 to keep the system's default", e);
            }
        }
        this.in = new BufferedInputStream(new InputStream() {
            @Override
            public int read() throws IOException {
                byte[] one = new byte[1];
                int n = read(one, 0, 1);
                return n < 0 ? -1 : one[0] & 0xFF;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                if (len == 0) {
                    return 0;
                }
                return ch.read(ByteBuffer.wrap(b, off, len));
            }
        }, 1 << 16);
        this.out = new BufferedOutputStream(new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                ByteBuffer buf = ByteBuffer.wrap(b, off, len);
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
            }
        }, 1 << 16);
    }

    /** Reads one frame (reader thread); null at a clean end of stream. */
    public Frame read() throws IOException {
        return Frames.read(in, maxFrame);
    }

    /** Reads one frame, an OUTPUT frame's payload into an array from {@code pool} (reader thread). */
    public Frame read(PayloadPool pool) throws IOException {
        return Frames.read(in, maxFrame, pool);
    }

    /** Writes and flushes one frame (task thread). */
    public void send(FrameType type, byte[] payload) throws IOException {
        Frames.write(out, type, payload);
        out.flush();
    }

    /** The number of bytes left in {@code parts}: the payload length of {@link #sendGathered}. */
    public static long length(List<ByteBuffer> parts) {
        long len = 0;
        for (ByteBuffer b : parts) {
            len += b.remaining();
        }
        return len;
    }

    /**
     * Writes one frame whose payload is {@code parts} (in order, {@code len} bytes: {@link
     * #length}) with one gathering write, then returns; the buffers are read, not kept (task
     * thread).
     */
    public void sendGathered(FrameType type, List<ByteBuffer> parts, long len) throws IOException {
        if (len > Integer.MAX_VALUE - 1) {
            throw new IllegalArgumentException("payload length out of range: " + len);
        }
        out.flush(); // nothing is buffered between sends; keep it so if that changes
        ByteBuffer[] all = new ByteBuffer[parts.size() + 1];
        all[0] = ByteBuffer.wrap(Frames.header(type, (int) len));
        for (int i = 0; i < parts.size(); i++) {
            all[i + 1] = parts.get(i);
        }
        long left = len + Frames.HEADER_BYTES;
        while (left > 0) {
            left -= ch.write(all);
        }
    }

    /** The socket's send buffer as the system reports it (it may cap or round what was asked). */
    public int sendBufferBytes() throws IOException {
        return ch.getOption(StandardSocketOptions.SO_SNDBUF);
    }

    public boolean isOpen() {
        return ch.isOpen();
    }

    /** Closes the socket; a blocked reader gets an exception or end of stream. Idempotent. */
    @Override
    public void close() throws IOException {
        ch.close();
    }
}
