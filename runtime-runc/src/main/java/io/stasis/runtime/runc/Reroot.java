package io.stasis.runtime.runc;

import io.stasis.core.sandbox.SandboxId;
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
        HelperBinary.run(id, "reroot", List.of(binary.toString(), Long.toString(initPid), newRoot.toString()), timeout);
    }
}
