package io.flinkgo.shim.runtime;

import java.io.IOException;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.flinkgo.shim.wire.ErrorCode;
import io.flinkgo.shim.wire.Frame;
import io.flinkgo.shim.wire.FrameType;
import io.flinkgo.shim.wire.Messages;
import io.flinkgo.shim.wire.PayloadPool;
import io.flinkgo.shim.wire.ProtocolException;
import io.flinkgo.shim.wire.Protocol;

/**
 * One Go process and its connection, from start to READY to CLOSE (protocol.md, "Sequence").
 *
 * <p>{@link #start} runs the handshake synchronously on the calling (task) thread: listen,
 * start the process, accept, check HELLO, send OPEN, RESTORE*, RESTORE_DONE, read READY. Only
 * then {@link #startReader} hands later frames to a callback on a reader thread. A watchdog
 * closes the socket if READY does not arrive within the startup timeout, so that no read
 * blocks forever.
 */
public final class GoSession implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(GoSession.class);

    /** What the operator knows when it starts the process. */
    public record StartSpec(
            String binary,
            String logPrefix,
            Path baseDir,
            Messages.Open open,
            List<Messages.Restore> restores,
            List<byte[]> markers,
            long startupTimeoutMillis,
            Long memoryLimitBytes,
            int socketBufferBytes) {}

    private final String logPrefix;
    private final GoProcess process;
    private final SocketServer server;
    private final Channel channel;
    private final Messages.Hello hello;
    private final Messages.Ready ready;
    private Thread reader;
    private volatile boolean closing;

    private GoSession(String logPrefix, GoProcess process, SocketServer server, Channel channel, Messages.Hello hello, Messages.Ready ready) {
        this.logPrefix = logPrefix;
        this.process = process;
        this.server = server;
        this.channel = channel;
        this.hello = hello;
        this.ready = ready;
    }

    /** Starts the process and runs the handshake up to READY; on failure everything is cleaned up. */
    public static GoSession start(StartSpec spec) throws Exception {
        SocketServer server = SocketServer.listen(spec.baseDir());
        GoProcess process = null;
        SocketChannel sc = null;
        Channel channel = null;
        try {
            byte[] tokenBytes = new byte[Protocol.TOKEN_BYTES];
            new SecureRandom().nextBytes(tokenBytes);
            String token = HexFormat.of().formatHex(tokenBytes);
            Map<String, String> env = new LinkedHashMap<>();
            env.put(Protocol.ENV_SOCKET, server.socketPath().toAbsolutePath().toString());
            env.put(Protocol.ENV_TOKEN, token);
            env.put(Protocol.ENV_PROTOCOL, Integer.toString(Protocol.VERSION));
            env.put(Protocol.ENV_PARENT_PID, Long.toString(ProcessHandle.current().pid()));
            if (spec.memoryLimitBytes() != null) {
                env.put("GOMEMLIMIT", Long.toString(spec.memoryLimitBytes()));
            }
            process = GoProcess.start(spec.binary(), List.of(), env, server.directory().toFile(), spec.logPrefix());
            final GoProcess p = process;
            long deadline = System.nanoTime() + spec.startupTimeoutMillis() * 1_000_000L;
            sc = server.accept(spec.startupTimeoutMillis(), p::isAlive);
            if (sc == null) {
                p.awaitExit(1000);
                throw new GoProcessException("the Go process exited before connecting (" + p.describeWithStderr() + ")");
            }
            channel = new Channel(sc, (int) (spec.open().maxFrame() > 0 ? spec.open().maxFrame() : io.flinkgo.shim.wire.Frames.DEFAULT_MAX_FRAME),
                    spec.socketBufferBytes());
            int sendBuffer = channel.sendBufferBytes();
            long left = Math.max(1, (deadline - System.nanoTime()) / 1_000_000L);
            GoSession s = handshake(spec, token, p, server, channel, left);
            LOG.info("{} Go process pid {} is ready (runtime {}, initial credit {} rows, socket send buffer {} bytes)",
                    spec.logPrefix(), p.pid(), s.hello.runtime(), s.ready.credit(), sendBuffer);
            return s;
        } catch (Exception e) {
            if (channel != null) {
                channel.close();
            } else if (sc != null) {
                sc.close(); // the Channel was not made (a bad send buffer)
            }
            if (process != null) {
                process.kill();
                process.awaitExit(2000);
            }
            server.close();
            if (e instanceof GoProcessException || process == null) {
                throw e;
            }
            throw new GoProcessException("starting the Go agent process failed: " + e.getMessage()
                    + " (" + process.describeWithStderr() + ")", e);
        }
    }

    private static GoSession handshake(StartSpec spec, String token, GoProcess p, SocketServer server, Channel ch, long timeoutMillis)
            throws Exception {
        CountDownLatch done = new CountDownLatch(1);
        Thread watchdog = new Thread(() -> {
            try {
                if (!done.await(timeoutMillis, TimeUnit.MILLISECONDS)) {
                    LOG.warn("{} Go pid {} did not become ready within {} ms; closing the socket", spec.logPrefix(), p.pid(), timeoutMillis);
                    ch.close();
                }
            } catch (InterruptedException | IOException ignored) {
                // nothing to do
            }
        }, "flinkgo-startup-watchdog " + spec.logPrefix());
        watchdog.setDaemon(true);
        watchdog.start();
        try {
            Messages.Hello hello = Messages.Hello.decode(expect(ch, FrameType.HELLO, p, "HELLO").payload());
            if (!MessageDigest.isEqual(hello.token().getBytes(StandardCharsets.UTF_8), token.getBytes(StandardCharsets.UTF_8))) {
                throw rejectPeer(ch, p, ErrorCode.BAD_TOKEN,
                        "the token in HELLO does not match the one this operator passed in " + Protocol.ENV_TOKEN
                                + "; the process that connected was not started by this operator");
            }
            if (hello.version() != Protocol.VERSION) {
                throw rejectPeer(ch, p, ErrorCode.VERSION_MISMATCH,
                        "the Go process speaks flinkgo protocol " + hello.version() + " (runtime " + hello.runtime()
                                + "), this shim speaks protocol " + Protocol.VERSION
                                + "; build the Go binary with a flinkgo release that matches the shim");
            }
            if (!hello.agents().contains(spec.open().agent())) {
                throw rejectPeer(ch, p, ErrorCode.INTERNAL, "the Go process holds agents " + hello.agents()
                        + " but not '" + spec.open().agent() + "' (its describe manifest said otherwise)");
            }
            ch.send(FrameType.OPEN, spec.open().encode());
            long maxFrame = spec.open().maxFrame() > 0 ? spec.open().maxFrame() : io.flinkgo.shim.wire.Frames.DEFAULT_MAX_FRAME;
            for (Messages.Restore r : spec.restores()) {
                byte[] payload = r.encode();
                if (payload.length + 1L > maxFrame) {
                    throw rejectPeer(ch, p, ErrorCode.FRAME_TOO_LARGE, "the stored section of key group " + r.keyGroup()
                            + " is " + r.section().length + " bytes, more than one frame may carry (go.max.frame.bytes="
                            + maxFrame + "); raise go.max.frame.bytes");
                }
                ch.send(FrameType.RESTORE, payload);
            }
            ch.send(FrameType.RESTORE_DONE, new Messages.RestoreDone(spec.markers()).encode());
            Messages.Ready ready = Messages.Ready.decode(expect(ch, FrameType.READY, p, "READY").payload());
            return new GoSession(spec.logPrefix(), p, server, ch, hello, ready);
        } finally {
            done.countDown();
        }
    }

    /** Reads the next frame during the handshake; ERROR and EOF become exceptions. */
    private static Frame expect(Channel ch, FrameType want, GoProcess p, String what) throws Exception {
        Frame f;
        try {
            f = ch.read();
        } catch (ProtocolException e) {
            throw rejectPeer(ch, p, e.code(), "while waiting for " + what + ": " + e.detail());
        } catch (IOException e) {
            p.awaitExit(1000);
            throw new GoProcessException("the connection ended while waiting for " + what + ": " + e + " (" + p.describeWithStderr() + ")", e);
        }
        if (f == null) {
            p.awaitExit(1000);
            throw new GoProcessException("the Go process closed the connection while the operator waited for " + what
                    + " (" + p.describeWithStderr() + ")");
        }
        if (f.type() == FrameType.ERROR) {
            Messages.Error e = Messages.Error.decode(f.payload());
            p.awaitExit(1000);
            throw new GoProcessException("the Go process reported " + e.code() + " while the operator waited for "
                    + what + ": " + e.message() + " (" + p.describeWithStderr() + ")");
        }
        if (f.type() != want) {
            throw rejectPeer(ch, p, ErrorCode.UNEXPECTED_FRAME, "got " + f.type() + " while waiting for " + what);
        }
        return f;
    }

    /** Sends ERROR (best effort), closes, and returns the exception to throw. */
    private static GoProcessException rejectPeer(Channel ch, GoProcess p, ErrorCode code, String message) throws InterruptedException {
        try {
            ch.send(FrameType.ERROR, new Messages.Error(code, message).encode());
        } catch (IOException ignored) {
            // the peer may be gone already
        }
        try {
            ch.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        p.awaitExit(1000);
        return new GoProcessException(code.wire() + ": " + message + " (" + p.describeWithStderr() + ")");
    }

    public Messages.Hello hello() {
        return hello;
    }

    public Messages.Ready ready() {
        return ready;
    }

    public GoProcess process() {
        return process;
    }

    public Channel channel() {
        return channel;
    }

    /**
     * Starts the reader thread: every frame goes to {@code onFrame} in order; the end of the
     * connection (null = clean EOF, else the exception) goes to {@code onEnd} once. OUTPUT
     * payloads are read into arrays from {@code pool} (null: a new array each), which the
     * consumer gives back once it has applied the frame.
     */
    public void startReader(PayloadPool pool, Consumer<Frame> onFrame, Consumer<Throwable> onEnd) {
        reader = new Thread(() -> {
            Throwable end = null;
            try {
                Frame f;
                while ((f = channel.read(pool)) != null) {
                    onFrame.accept(f);
                }
            } catch (Throwable t) {
                end = t;
            }
            if (!closing) {
                onEnd.accept(end);
            }
        }, "flinkgo-reader " + logPrefix);
        reader.setDaemon(true);
        reader.start();
    }

    /** Whether {@link #close} has begun (an EOF after that is expected). */
    public boolean isClosing() {
        return closing;
    }

    /**
     * Builds the exception for a failure: waits briefly for the process to exit so the message
     * can carry its exit code, and appends the last stderr lines.
     */
    public GoProcessException failure(String what, Throwable cause) {
        try {
            process.awaitExit(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return new GoProcessException("Go agent process failed: " + what + " (" + process.describeWithStderr() + ")", cause);
    }

    /** Sends ERROR to Go (best effort). */
    public void sendError(ErrorCode code, String message) {
        try {
            channel.send(FrameType.ERROR, new Messages.Error(code, message).encode());
        } catch (IOException ignored) {
            // best effort
        }
    }

    /**
     * Orderly when {@code graceful}: CLOSE, wait up to {@code closeTimeoutMillis} for exit,
     * then SIGTERM/SIGKILL. Otherwise kill at once. Always removes the socket directory.
     * Idempotent.
     */
    public void close(boolean graceful, long closeTimeoutMillis) {
        if (closing) {
            return;
        }
        closing = true;
        try {
            if (graceful && channel.isOpen() && process.isAlive()) {
                try {
                    channel.send(FrameType.CLOSE, Messages.empty());
                } catch (IOException e) {
                    LOG.debug("{} CLOSE not sent: {}", logPrefix, e.toString());
                }
                Integer code = process.stop(closeTimeoutMillis);
                if (code != null && code != 0) {
                    LOG.warn("{} Go process exited with code {} after CLOSE ({})", logPrefix, code, process.describeWithStderr());
                }
            } else {
                process.kill();
                process.stop(2000);
            }
        } finally {
            try {
                channel.close();
            } catch (IOException ignored) {
                // closing anyway
            }
            try {
                server.close();
            } catch (IOException e) {
                LOG.warn("{} cannot delete {}: {}", logPrefix, server.directory(), e.toString());
            }
            if (reader != null) {
                try {
                    reader.join(1000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    @Override
    public void close() {
        close(false, 0);
    }
}
