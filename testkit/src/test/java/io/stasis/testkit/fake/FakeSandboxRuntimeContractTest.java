package io.stasis.testkit.fake;

import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.SandboxRuntime;
import io.stasis.testkit.RuntimeLifecycleSuite;
import java.nio.file.Path;

/** The fake runtime keeps the same contract as runc ({@code RuncRuntimeIT}). */
class FakeSandboxRuntimeContractTest extends RuntimeLifecycleSuite {
    private final FakeSandboxRuntime runtime = new FakeSandboxRuntime();

    @Override
    protected SandboxRuntime runtime() {
        return runtime;
    }

    @Override
    protected Path newRoot(SandboxId id) {
        return rootOf(id);
    }

    @Override
    protected Path rootOf(SandboxId id) {
        return Path.of("/fake-roots", id.value());
    }

    @Override
    protected void deleteRoot(SandboxId id) {
    }

    @Override
    protected boolean runsInBackground(SandboxId id) {
        return runtime.inBackground(id);
    }
}
