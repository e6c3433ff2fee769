package io.stasis.runtime.runc;

import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.SandboxRuntime;
import io.stasis.testkit.IsolationSuite;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The lifecycle and isolation suites against runc, on a real btrfs pool with the busybox template. */
class RuncRuntimeIT extends IsolationSuite {
    private static RuncTestHost host;

    @BeforeAll
    static void setUp() throws IOException {
        host = new RuncTestHost();
    }

    @AfterAll
    static void tearDown() throws IOException {
        host.close();
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
    protected Path rootOf(SandboxId id) {
        return host.root(id);
    }

    @Override
    protected void deleteRoot(SandboxId id) {
        host.roots.deleteRoot(id);
    }
}
