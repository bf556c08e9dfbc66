package io.flinkgo.shim.runtime;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Go agent process: started with its environment, its stderr forwarded line by line to the
 * Flink log (prefixed with the subtask name), the last lines kept for error messages.
 *
 * <p>{@link #stop} is idempotent and bounded: wait for a voluntary exit, then SIGTERM, then
 * SIGKILL. Thread-safe.
 */
public final class GoProcess {
    private static final Logger LOG = LoggerFactory.getLogger(GoProcess.class);

    /** How many stderr lines are kept for error messages. */
    public static final int TAIL_LINES = 20;

    private final String binary;
    private final String logPrefix;
    private final Process process;
    private final Thread stderrPump;
    private final Deque<String> tail = new ArrayDeque<>();

    private GoProcess(String binary, String logPrefix, Process process) {
        this.binary = binary;
        this.logPrefix = logPrefix;
        this.process = process;
        this.stderrPump = new Thread(this::pumpStderr, "flinkgo-stderr " + logPrefix);
        this.stderrPump.setDaemon(true);
        this.stderrPump.start();
    }

    /**
     * Starts {@code binary} with {@code args}, extra environment and working directory.
     * stdout is discarded (the protocol runs over the socket); stderr goes to the log.
     */
    public static GoProcess start(String binary, List<String> args, Map<String, String> env, File workDir, String logPrefix)
            throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(binary);
        cmd.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(workDir);
        pb.environment().putAll(env);
        pb.redirectOutput(ProcessBuilder.Redirect.DISCARD);
        pb.redirectInput(ProcessBuilder.Redirect.PIPE);
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            throw new IOException("cannot start the Go agent binary " + binary + ": " + e.getMessage(), e);
        }
        LOG.info("{} started Go agent process pid {} ({})", logPrefix, p.pid(), binary);
        return new GoProcess(binary, logPrefix, p);
    }

    private void pumpStderr() {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                LOG.info("{} [go pid {}] {}", logPrefix, process.pid(), line);
                synchronized (tail) {
                    if (tail.size() == TAIL_LINES) {
                        tail.removeFirst();
                    }
                    tail.addLast(line);
                }
            }
        } catch (IOException e) {
            LOG.debug("{} stderr of Go pid {} closed: {}", logPrefix, process.pid(), e.toString());
        }
    }

    public long pid() {
        return process.pid();
    }

    public String binary() {
        return binary;
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** The exit code, or {@code null} while the process runs. */
    public Integer exitCode() {
        return process.isAlive() ? null : process.exitValue();
    }

    /** Waits up to {@code millis} for the process to exit; returns its exit code or null. */
    public Integer awaitExit(long millis) throws InterruptedException {
        if (process.waitFor(millis, TimeUnit.MILLISECONDS)) {
            awaitStderr(200);
            return process.exitValue();
        }
        return null;
    }

    private void awaitStderr(long millis) throws InterruptedException {
        stderrPump.join(millis);
    }

    /** The last stderr lines (at most {@link #TAIL_LINES}). */
    public List<String> stderrTail() {
        synchronized (tail) {
            return new ArrayList<>(tail);
        }
    }

    /** "pid 123, binary /x/agent, exit code 2" (or "still running"). */
    public String describe() {
        Integer code = exitCode();
        return "pid " + pid() + ", binary " + binary + ", " + (code == null ? "still running" : "exit code " + code);
    }

    /** {@link #describe()} plus the last stderr lines, for exception messages. */
    public String describeWithStderr() {
        List<String> lines = stderrTail();
        StringBuilder b = new StringBuilder(describe());
        if (lines.isEmpty()) {
            b.append("; no stderr output");
        } else {
            b.append("; last stderr lines:");
            for (String l : lines) {
                b.append("\n    ").append(l);
            }
        }
        return b.toString();
    }

    /**
     * Waits up to {@code graceMillis} for an exit, then sends SIGTERM and waits up to 1 s more,
     * then SIGKILL. Idempotent; returns the exit code if known.
     */
    public Integer stop(long graceMillis) {
        try {
            Integer code = awaitExit(graceMillis);
            if (code != null) {
                return code;
            }
            LOG.warn("{} Go pid {} did not exit within {} ms; terminating it", logPrefix, pid(), graceMillis);
            process.destroy();
            code = awaitExit(1000);
            if (code != null) {
                return code;
            }
            LOG.warn("{} Go pid {} ignored SIGTERM; killing it", logPrefix, pid());
            process.destroyForcibly();
            return awaitExit(5000);
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** Kills at once (task failure or cancellation). Idempotent. */
    public void kill() {
        process.destroyForcibly();
    }
}
