package io.stasis.core.lifecycle;

import io.stasis.core.network.NetworkService;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.RootStore;
import io.stasis.core.spi.SandboxRuntime;

/**
 * Ends a sandbox the service started ahead of demand and never recorded (a warm one, a fork spare):
 * its processes, its root, its network; each step is tried even if one before it failed.
 */
record UnrecordedSandbox(RootStore roots, SandboxRuntime runtime, NetworkService network) {

    void end(SandboxId id) {
        try {
            runtime.destroy(id);
        } finally {
            try {
                roots.deleteRoot(id);
            } finally {
                network.release(id);
            }
        }
    }
}
