package io.stasis.runtime.runc;

import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.host.ToolRunner;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/** The only class that runs {@code stasis-reroot} (src/main/c/stasis-reroot.c): a new root for a running sandbox. */
final class Reroot {
    private final Path binary;
    private final Duration timeout;

    private Reroot(Path binary, Duration timeout) {
        this.binary = binary;
        this.timeout = timeout;
    }

    static Reroot install(Path binDir, Duration timeout) {
        return new Reroot(HelperBinary.install(binDir, HelperBinary.REROOT), timeout);
    }

    /** Moves the sandbox whose process 1 has host pid {@code initPid} onto {@code newRoot}; its init then binds its socket there. */
    void run(SandboxId id, long initPid, Path newRoot) {
        String step = "reroot";
        try {
            var result = ToolRunner.run(List.of(binary.toString(), Long.toString(initPid), newRoot.toString()), timeout);
            if (result.exitCode() != 0) throw StasisException.runtimeFailed(id.value(), step, result.stderrTail(), null);
        } catch (IOException | ToolRunner.TimedOut e) {
            throw StasisException.runtimeFailed(id.value(), step, e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw StasisException.runtimeFailed(id.value(), step, "interrupted", e);
        }
    }
}
