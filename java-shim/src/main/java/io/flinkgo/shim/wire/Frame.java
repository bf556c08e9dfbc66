package io.flinkgo.shim.wire;

/**
 * One frame as read from the socket: its type and its payload (everything after the type
 * byte). The payload array is owned by the frame.
 */
public record Frame(FrameType type, byte[] payload) {
    @Override
    public String toString() {
        return type + "(" + payload.length + " bytes)";
    }
}
