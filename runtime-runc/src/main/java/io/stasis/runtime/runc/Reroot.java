package io.stasis.runtime.runc;

import io.stasis.core.sandbox.SandboxId;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The only class that runs {@code stasis-reroot} (src/main/c/stasis-reroot.c): a new root for a
 * running sandbox, the step a fork into a warm sandbox waits on; one is kept started ahead.
 */
final class Reroot implements AutoCloseable {
    private final HelperAhead helper;
    private final Duration timeout;

    private Reroot(HelperAhead helper, Duration timeout) {
        this.helper = helper;
        this.timeout = timeout;
    }

    static Reroot install(Path binDir, Duration timeout) {
        return new Reroot(new HelperAhead(HelperBinary.install(binDir, HelperBinary.REROOT)), timeout);
    }

    /** Moves the sandbox whose process 1 has host pid {@code initPid} onto {@code newRoot}; its init then binds its socket there. */
    void run(SandboxId id, long initPid, Path newRoot) {
        helper.run(id, "reroot", List.of(Long.toString(initPid), newRoot.toString()), timeout);
    }

    @Override
    public void close() {
        helper.close();
    }
}
