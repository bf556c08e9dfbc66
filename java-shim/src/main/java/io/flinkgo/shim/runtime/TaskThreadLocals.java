package io.flinkgo.shim.runtime;

import java.io.IOException;

import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.types.StringValue;

/**
 * Thread-local state of the task thread that the operator sets up before it opens its socket.
 *
 * <p>Design note: Flink's {@code StringValue.readString}, which deserialises every STRING field
 * of every input row, looks up a {@code ThreadLocal} char buffer on each call. A {@code
 * ThreadLocal} lives in a small open-addressing table per thread, and is found at once only if
 * it sits in its home slot. The socket's first writes on the task thread create the JDK's NIO
 * thread-locals (temporary direct buffers, native buffers, the registry of thread-locals to
 * clean up at thread exit); when one of them took the char buffer's home slot first, every
 * string lookup missed and probed on ({@code ThreadLocalMap.getEntryAfterMiss}, 6.9 % of the
 * task thread in the bridge benchmark's profile; the {@code map} job's task thread has no NIO
 * thread-locals and no misses). Reading one string here, before the socket exists, puts the
 * char buffer in its home slot; the NIO thread-locals, looked up once per frame, probe instead.
 * Measured on the bridge benchmark (three alternating pairs of bridge-only JVMs, 16 M rows):
 * about +0.5 %, within the run-to-run noise; it is kept because it costs one string read per
 * subtask and removes the misses from the profile.
 */
public final class TaskThreadLocals {
    private static final byte[] ONE_CHAR_STRING = {2, 'a'}; // StringValue's encoding: length + 1, then the char

    private TaskThreadLocals() {}

    /**
     * Call on the task thread before the first socket operation.
     *
     * @return the string read ("a"), for tests
     */
    public static String claimStringBuffer() {
        try {
            return StringValue.readString(new DataInputDeserializer(ONE_CHAR_STRING));
        } catch (IOException e) {
            throw new IllegalStateException("reading a one-character string from memory failed", e);
        }
    }
}
