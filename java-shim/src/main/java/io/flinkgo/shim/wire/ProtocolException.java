package io.flinkgo.shim.wire;

import java.io.IOException;

/**
 * A violation of wire protocol v1, classified by the {@link ErrorCode} that an ERROR frame for
 * it carries. Thrown by the codec when reading bytes from the peer, and by the operator when
 * the peer sends a frame it does not expect.
 */
public class ProtocolException extends IOException {
    private static final long serialVersionUID = 1L;

    private final ErrorCode code;

    public ProtocolException(ErrorCode code, String message) {
        super(code.wire() + ": " + message);
        this.code = code;
    }

    public ProtocolException(ErrorCode code, String message, Throwable cause) {
        super(code.wire() + ": " + message, cause);
        this.code = code;
    }

    public ErrorCode code() {
        return code;
    }

    /** The message without the code prefix, as sent in an ERROR frame. */
    public String detail() {
        String m = getMessage();
        String prefix = code.wire() + ": ";
        return m.startsWith(prefix) ? m.substring(prefix.length()) : m;
    }
}
