package io.stasis.cli;

import io.stasis.sdk.ProcessInfo;

/** The CLI's exit code for a background process that ended: its own, as for {@code exec}. */
final class ProcessExit {
    private ProcessExit() {
    }

    /** The process's exit code; {@link ExitCodes#ERROR} with a message when it was lost. */
    static int code(ProcessInfo process, CliIo io) {
        if (process.exitCode() != null) return process.exitCode();
        io.err().println("error: process " + process.pid() + " has no exit status (" + process.status()
                + ": it was running when the sandbox's processes were lost)");
        return ExitCodes.ERROR;
    }
}
