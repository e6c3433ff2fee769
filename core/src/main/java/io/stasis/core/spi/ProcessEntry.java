package io.stasis.core.spi;

import io.stasis.core.exec.ExitStatus;
import java.util.Optional;

/**
 * A background process as the runtime keeps it inside the sandbox.
 *
 * @param processId   the runtime's name for it (stable, unique in the sandbox)
 * @param pid         its pid as the sandbox sees it
 * @param label       what the caller stored beside it when starting it
 * @param exit        how it ended, once it has
 * @param lost        it never ended but is gone: the sandbox was stopped (or rebooted) since
 * @param stdoutBytes output written so far
 * @param stderrBytes errors written so far
 */
public record ProcessEntry(String processId, long pid, byte[] label, Optional<ExitStatus> exit, boolean lost,
                           long stdoutBytes, long stderrBytes) {
    public boolean running() {
        return exit.isEmpty() && !lost;
    }
}
