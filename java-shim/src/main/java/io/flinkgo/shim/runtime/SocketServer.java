package io.flinkgo.shim.runtime;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Comparator;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

/**
 * The operator's end of the socket: a private directory (0700) holding {@code s.sock} (0600),
 * listened on until the one Go process connects. {@link #close} removes both.
 */
public final class SocketServer implements AutoCloseable {
    /** The socket file's name inside the private directory. */
    public static final String SOCKET_NAME = "s.sock";

    private final Path dir;
    private final Path socket;
    private final ServerSocketChannel server;
    private boolean closed;

    private SocketServer(Path dir, Path socket, ServerSocketChannel server) {
        this.dir = dir;
        this.socket = socket;
        this.server = server;
    }

    /** Creates the private directory under {@code baseDir} and listens on its socket. */
    public static SocketServer listen(Path baseDir) throws IOException {
        Path dir = Files.createTempDirectory(baseDir, "flinkgo-",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Path socket = dir.resolve(SOCKET_NAME);
        ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            server.bind(UnixDomainSocketAddress.of(socket), 1);
            // The directory is already private; the mode of the socket is belt and braces.
            Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-------"));
        } catch (IOException e) {
            server.close();
            deleteTree(dir);
            throw new IOException("cannot listen on Unix socket " + socket + " (" + socket.toString().length()
                    + " chars; the limit is about 100): " + e.getMessage(), e);
        }
        return new SocketServer(dir, socket, server);
    }

    public Path socketPath() {
        return socket;
    }

    public Path directory() {
        return dir;
    }

    /**
     * Waits for the connection.
     *
     * @param timeoutMillis how long to wait at most
     * @param keepWaiting polled every 100 ms; when false (e.g. the process exited) returns null
     * @return the connected channel (blocking mode), or null if {@code keepWaiting} turned false
     * @throws IOException on timeout or socket failure
     */
    public SocketChannel accept(long timeoutMillis, BooleanSupplier keepWaiting) throws IOException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        server.configureBlocking(false);
        try (Selector selector = Selector.open()) {
            server.register(selector, SelectionKey.OP_ACCEPT);
            while (true) {
                SocketChannel ch = server.accept();
                if (ch != null) {
                    ch.configureBlocking(true);
                    return ch;
                }
                if (!keepWaiting.getAsBoolean()) {
                    return null;
                }
                long left = (deadline - System.nanoTime()) / 1_000_000L;
                if (left <= 0) {
                    throw new IOException("the Go process did not connect to " + socket + " within " + timeoutMillis + " ms");
                }
                selector.select(Math.min(left, 100));
                selector.selectedKeys().clear();
            }
        }
    }

    /** Stops listening and deletes the directory. Idempotent. */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            server.close();
        } finally {
            deleteTree(dir);
        }
    }

    static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : (Iterable<Path>) s.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(p);
            }
        }
    }
}
