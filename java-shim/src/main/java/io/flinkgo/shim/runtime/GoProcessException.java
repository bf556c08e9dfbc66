package io.flinkgo.shim.runtime;

/**
 * The Go agent process failed, hung or broke the protocol. The message names the process (pid,
 * binary, exit code), what went wrong (with the ERROR frame's code and message when there was
 * one) and the last lines of its stderr.
 */
public class GoProcessException extends Exception {
    private static final long serialVersionUID = 1L;

    public GoProcessException(String message) {
        super(message);
    }

    public GoProcessException(String message, Throwable cause) {
        super(message, cause);
    }
}
