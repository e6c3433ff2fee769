package io.stasis.cli;

/** The process exit codes of {@code stasis}; {@code exec} exits with the command's own code. */
final class ExitCodes {
    static final int OK = 0;
    /** The server refused the call, or a local file could not be read or written. */
    static final int ERROR = 1;
    /** Bad arguments or configuration (picocli's usage code). */
    static final int USAGE = 2;
    /** The server could not be reached. */
    static final int CANNOT_CONNECT = 3;
    /** {@code exec}: the command hit its timeout (as coreutils' timeout(1)). */
    static final int TIMED_OUT = 124;

    private ExitCodes() {
    }
}
