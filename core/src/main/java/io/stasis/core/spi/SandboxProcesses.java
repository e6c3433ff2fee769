package io.stasis.core.spi;

import io.stasis.core.sandbox.SandboxId;
import java.util.List;

/**
 * The processes of running sandboxes: one-off execs and background processes whose output and exit
 * outlive the service.
 */
public interface SandboxProcesses {
    /**
     * Starts one process inside a running sandbox.
     * <p>Effects on success: the process runs; its output goes to files inside the sandbox root,
     * so it outlives the service; the handle reads them.
     * <p>On failure: {@code runtime_failed} (or {@code invalid_request} for a bad working directory);
     * a program that cannot be executed yields a handle whose exit status is 127 or 126.
     */
    ExecHandle spawn(SandboxId id, SpawnSpec spec);

    /**
     * Starts a process that outlives the call (a background process). Its output and exit status
     * stay in files inside the sandbox, beside {@code label} (the caller's description of it, opaque
     * to the runtime), so that it is found again after a restart of the service, in a hibernated
     * and resumed sandbox, and in every fork.
     * <p>Errors: as {@link #spawn}. Returns its pid as the sandbox sees it.
     */
    long startProcess(SandboxId id, String processId, SpawnSpec spec, byte[] label);

    /** The background processes of a sandbox, running or ended, in no particular order. */
    List<ProcessEntry> processes(SandboxId id);

    /**
     * A handle on a background process: its output and its exit. Closing the handle leaves the
     * process and its files; {@link ExecHandle#killTree} ends it and what it started.
     */
    ExecHandle attach(SandboxId id, String processId);

    /** Sends a signal to one process of the sandbox ({@code pid} as the sandbox sees it). */
    void signal(SandboxId id, long pid, int signal);

    /**
     * Writes to the standard input of a background process started with a stdin pipe (or a
     * terminal). Waits, up to a bound, while the pipe is full.
     * <p>Errors: {@code invalid_state} when the process has no open stdin (it ended, or stdin was
     * closed, or it never had a pipe).
     */
    void writeStdin(SandboxId id, String processId, byte[] data);

    /** Closes a background process's standard input: it reads end of file once it has read what was written. */
    void closeStdin(SandboxId id, String processId);

    /** Changes the window size of a process's terminal (its foreground job gets SIGWINCH). */
    void resizeTerminal(SandboxId id, String processId, SpawnSpec.TerminalSize size);

    /** Removes a background process's files (its output, its exit status). */
    void forgetProcess(SandboxId id, String processId);
}
