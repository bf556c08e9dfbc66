package io.flinkgo.shim.runtime;

import java.io.IOException;

import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.types.StringValue;

/**
 * Thread-local state of the task thread that the operator sets up before it opens its socket.
 *
 * <p>Design note: Flink's {@code StringValue.readString} looks up a {@code ThreadLocal} char
 * buffer for every STRING field it reads; when the JDK's NIO thread-locals, created by the
 * socket's first writes, take that buffer's home slot first, every lookup misses and probes on.
 * Reading one string before the socket exists puts the buffer in its home slot. Why and what it
 * measured: docs/design-decisions.md, "The task thread's string buffer is claimed before the
 * socket exists".
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
