package io.flinkgo.shim.wire;

/** Frame type codes of wire protocol v1 (protocol.md, "Frames"). */
public enum FrameType {
    HELLO(0x01),
    OPEN(0x02),
    RESTORE(0x03),
    RESTORE_DONE(0x04),
    READY(0x05),
    DATA(0x10),
    CREDIT(0x11),
    OUTPUT(0x12),
    WATERMARK(0x13),
    WM_ACK(0x14),
    BARRIER(0x15),
    SNAPSHOT(0x16),
    CHECKPOINT_COMPLETE(0x17),
    CHECKPOINT_ABORTED(0x18),
    END_INPUT(0x19),
    END_ACK(0x1A),
    METRICS(0x1B),
    OUTPUT_REF(0x1C),
    ERROR(0x7E),
    CLOSE(0x7F);

    private static final FrameType[] BY_CODE = new FrameType[256];

    static {
        for (FrameType t : values()) {
            BY_CODE[t.code] = t;
        }
    }

    private final int code;

    FrameType(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    /** The type for a code byte, or {@code null} if the code is not defined in v1. */
    public static FrameType fromCode(int code) {
        return code >= 0 && code < 256 ? BY_CODE[code] : null;
    }
}
