package io.stasis.runtime.runc;

import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.SandboxRuntime;
import io.stasis.testkit.LiveStateSuite;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;

/** {@link LiveStateSuite} on a {@link RuncTestHost}: each runner sets {@link #host} up with its runtime before the suite runs. */
abstract class LiveStateOnHost extends LiveStateSuite {
    static RuncTestHost host;

    @AfterAll
    static void tearDown() throws IOException {
        if (host != null) host.close();
        host = null;
    }

    @Override
    protected SandboxRuntime runtime() {
        return host.runtime;
    }

    @Override
    protected Path newRoot(SandboxId id) {
        return host.roots.createRoot(id, "tiny", Resources.DEFAULT.diskBytes());
    }

    @Override
    protected void deleteRoot(SandboxId id) {
        host.roots.deleteRoot(id);
    }

    @Override
    protected Path copyRoot(SandboxId source, SandboxId copy) {
        return host.copyRoot(source, copy);
    }

    @Override
    protected Path rootOf(SandboxId id) {
        return host.root(id);
    }

    @Override
    protected Path replaceRoot(SandboxId id, SandboxId source) {
        return host.replaceRoot(id, source);
    }

    @Override
    protected void deleteReplacedRoot(SandboxId id) {
        host.roots.deleteReplacedRoot(id);
    }
}
