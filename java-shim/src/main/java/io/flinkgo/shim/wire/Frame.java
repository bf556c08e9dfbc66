package io.flinkgo.shim.wire;

/**
 * One frame as read from the socket: its type and its payload, the first {@code length} bytes
 * of {@code payload} (everything after the type byte).
 *
 * <p>Every frame's array is exactly {@code length} bytes long, except an OUTPUT frame read with
 * a {@link PayloadPool}: its array comes from the pool, may be longer (the bytes past {@code
 * length} are left from an earlier frame and mean nothing), and goes back to the pool once the
 * frame has been applied.
 */
public record Frame(FrameType type, byte[] payload, int length) {
    public Frame {
        if (length < 0 || length > payload.length) {
            throw new IllegalArgumentException("frame length " + length + " outside its " + payload.length + "-byte array");
        }
    }

    /** A frame whose payload is all of {@code payload}. */
    public Frame(FrameType type, byte[] payload) {
        this(type, payload, payload.length);
    }

    @Override
    public String toString() {
        return type + "(" + length + " bytes)";
    }
}
