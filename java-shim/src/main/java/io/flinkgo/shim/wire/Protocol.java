package io.flinkgo.shim.wire;

/** Constants of wire protocol v1 that both sides share (protocol.md). */
public final class Protocol {
    /** The protocol version this shim speaks. */
    public static final int VERSION = 1;

    /** Environment variable: absolute path of the socket. */
    public static final String ENV_SOCKET = "FLINKGO_SOCKET";
    /** Environment variable: the token, 64 hex chars. */
    public static final String ENV_TOKEN = "FLINKGO_TOKEN";
    /** Environment variable: the protocol version the operator speaks. */
    public static final String ENV_PROTOCOL = "FLINKGO_PROTOCOL";
    /** Environment variable: the pid of the JVM. */
    public static final String ENV_PARENT_PID = "FLINKGO_PARENT_PID";

    /** Bytes of randomness in a token. */
    public static final int TOKEN_BYTES = 32;

    private Protocol() {}
}
