package io.flinkgo.shim.runtime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.flinkgo.shim.wire.Frame;
import io.flinkgo.shim.wire.FrameType;

/** The socket send buffer ({@code go.socket.buffer.bytes}) on a real Unix socket pair. */
class ChannelTest {
    @TempDir
    Path tmp;

    /** The kernel's cap on SO_SNDBUF; a request above it gets the cap. */
    private static long wmemMax() throws IOException {
        Path p = Path.of("/proc/sys/net/core/wmem_max");
        // Not Files.readString: it reads a /proc file (size 0) short.
        return Files.isReadable(p) ? Long.parseLong(Files.readAllLines(p).get(0).trim()) : 1L << 20;
    }

    private SocketChannel[] pair(String name) throws IOException {
        UnixDomainSocketAddress addr = UnixDomainSocketAddress.of(tmp.resolve(name));
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(addr);
            SocketChannel client = SocketChannel.open(addr);
            return new SocketChannel[] {server.accept(), client};
        }
    }

    @Test
    void askedSendBufferIsSetAndTheDefaultIsKeptAtZero() throws Exception {
        SocketChannel[] a = pair("a.sock");
        SocketChannel[] b = pair("b.sock");
        try (Channel big = new Channel(a[0], 1 << 20, 1 << 20); Channel dflt = new Channel(b[0], 1 << 20, 0)) {
            int asked = (int) Math.min(1 << 20, wmemMax());
            assertTrue(big.sendBufferBytes() >= asked, "send buffer " + big.sendBufferBytes() + " < " + asked);
            assertTrue(big.sendBufferBytes() > dflt.sendBufferBytes() || wmemMax() <= dflt.sendBufferBytes(),
                    "asked 1 MiB, got " + big.sendBufferBytes() + "; the default is " + dflt.sendBufferBytes());
        } finally {
            a[1].close();
            b[1].close();
        }
    }

    @Test
    void aFrameWithinTheBufferIsWrittenBeforeThePeerReadsAndArrivesWhole() throws Exception {
        SocketChannel[] p = pair("c.sock");
        int buffer = (int) Math.min(4 << 20, wmemMax());
        // Well inside the buffer (the kernel counts its own overhead per chunk against it), and
        // above the system's default, in which a write this size waits for the reader.
        int size = buffer / 4;
        byte[] payload = new byte[size];
        for (int i = 0; i < size; i++) {
            payload[i] = (byte) (i * 31 + 7);
        }
        try (Channel ch = new Channel(p[0], 8 << 20, buffer); Channel peer = new Channel(p[1], 8 << 20, 0)) {
            CompletableFuture<Void> sent = CompletableFuture.runAsync(() -> {
                try {
                    ch.sendGathered(FrameType.DATA, List.of(ByteBuffer.wrap(payload)), size);
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            });
            // Nobody reads yet: the write must still complete (into the socket buffer).
            sent.get(30, TimeUnit.SECONDS);
            assertFalse(sent.isCompletedExceptionally());
            Frame f = peer.read();
            assertEquals(FrameType.DATA, f.type());
            assertArrayEquals(payload, f.payload());
        }
    }

    @Test
    void negativeSendBufferIsRejectedAndTheSocketIsLeftAlone() throws Exception {
        SocketChannel[] p = pair("d.sock");
        try {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new Channel(p[0], 1 << 20, -1));
            assertTrue(e.getMessage().contains(">= 0") && e.getMessage().contains("-1"), e.getMessage());
            assertTrue(p[0].isOpen());
        } finally {
            p[0].close();
            p[1].close();
        }
    }
}
