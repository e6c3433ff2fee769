package io.stasis.sdk;

import java.time.Instant;
import java.util.List;

/**
 * A background process as the server last described it.
 *
 * @param id             {@code prc_...}, unique for good (a pid is reused after the process is forgotten)
 * @param pid            its pid as the sandbox sees it; how the API addresses it
 * @param cmd            its argv
 * @param cwd            its working directory, or null for the default
 * @param tag            the caller's label, or null ({@code terminal} for terminals)
 * @param startedAt      when it started
 * @param status         {@code running}, {@code exited}, or {@code lost} (it was running when the
 *                       sandbox's processes were lost, e.g. after a host crash)
 * @param exitCode       when exited: its exit status (128+N when signal N ended it), else null
 * @param signal         when a signal ended it: its name ({@code "TERM"}), else null
 * @param keepAlive      whether it keeps the sandbox from being idle while it runs
 * @param keepAliveUntil when that ends, or null for as long as it runs
 * @param stdoutBytes    how much it has written to stdout so far
 * @param stderrBytes    how much it has written to stderr so far
 * @param stdin          whether its standard input is open for writes
 * @param pty            whether it runs on a terminal (then all its output is stdout)
 */
public record ProcessInfo(String id, long pid, List<String> cmd, String cwd, String tag, Instant startedAt,
                          String status, Integer exitCode, String signal, boolean keepAlive, Instant keepAliveUntil,
                          long stdoutBytes, long stderrBytes, boolean stdin, boolean pty) {
    public ProcessInfo {
        cmd = cmd == null ? List.of() : List.copyOf(cmd);
    }

    public boolean isRunning() {
        return "running".equals(status);
    }

    /** Exited or lost: nothing more will happen to it. */
    public boolean hasEnded() {
        return !isRunning();
    }

    /** This description with the end the output stream reported, for when the process itself can no longer be read. */
    ProcessInfo exited(int code, String signalName) {
        return new ProcessInfo(id, pid, cmd, cwd, tag, startedAt, code < 0 ? "lost" : "exited", code < 0 ? null : code,
                signalName, keepAlive, keepAliveUntil, stdoutBytes, stderrBytes, stdin, pty);
    }
}
