package io.flinkgo.shim.wire;

/** The {@code code} values of an ERROR frame (protocol.md, "Errors"). */
public enum ErrorCode {
    BAD_TOKEN("bad_token"),
    VERSION_MISMATCH("version_mismatch"),
    FRAME_TOO_LARGE("frame_too_large"),
    UNKNOWN_FRAME("unknown_frame"),
    MALFORMED_FRAME("malformed_frame"),
    UNEXPECTED_FRAME("unexpected_frame"),
    BAD_SCHEMA("bad_schema"),
    RESTORE_FAILED("restore_failed"),
    ACTION_FAILED("action_failed"),
    STORE_FAILED("store_failed"),
    INTERNAL("internal");

    private final String wire;

    ErrorCode(String wire) {
        this.wire = wire;
    }

    /** The string sent on the wire. */
    public String wire() {
        return wire;
    }

    /**
     * Maps a wire string to a code. An unknown string (a newer peer) maps to {@link #INTERNAL};
     * the original string is kept by the caller in the message.
     */
    public static ErrorCode fromWire(String s) {
        for (ErrorCode c : values()) {
            if (c.wire.equals(s)) {
                return c;
            }
        }
        return INTERNAL;
    }
}
