package io.stasis.core.process;

import io.stasis.core.exec.ExitStatus;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * A background process as callers see it.
 *
 * @param id       stable id ({@code prc_...}); the pid is the usual handle
 * @param status   {@code running}, {@code exited}, or {@code lost} (it was running when the sandbox stopped)
 * @param keepAliveUntil when keepAlive stops holding, if it has a deadline
 */
public record ProcessInfo(String id, long pid, List<String> cmd, Optional<String> cwd, Optional<String> tag, Instant startedAt,
                          String status, Optional<ExitStatus> exit, boolean keepAlive, Optional<Instant> keepAliveUntil,
                          long stdoutBytes, long stderrBytes, boolean stdin, boolean terminal) {
    public boolean running() {
        return status.equals("running");
    }

    /** Whether, running now, it keeps its sandbox from counting as idle. */
    public boolean keepsAwake(Instant now) {
        return running() && keepAlive && keepAliveUntil.map(now::isBefore).orElse(true);
    }
}
