package io.stasis.core.lifecycle;

import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.spi.RootStore;
import java.util.function.Supplier;

/**
 * A root's disk limit a little higher for one step that writes the service's own few files into
 * it: a root at its limit refused them (EDQUOT), so a sandbox that had filled its disk could never
 * come back from hibernation, start again, or run on after a gVisor memory checkpoint. The control
 * socket is bound again in the root after a restore (CRIU) and after a gVisor checkpoint (stasis-init,
 * which lets go of it for runsc); the runtime writes /.stasis/instance after a restore and
 * /.stasis/boot at a start. A crash during the step leaves the higher limit until the reconciler
 * sets the recorded one again.
 */
public final class DiskHeadroom {
    static final long BYTES = 4L << 20;

    private DiskHeadroom() {
    }

    public static <T> T during(RootStore roots, Sandbox sandbox, Supplier<T> step) {
        long limit = sandbox.resources().diskBytes();
        roots.limitRoot(sandbox.id(), limit + BYTES);
        try {
            return step.get();
        } finally {
            roots.limitRoot(sandbox.id(), limit);
        }
    }

    public static void during(RootStore roots, Sandbox sandbox, Runnable step) {
        during(roots, sandbox, () -> {
            step.run();
            return null;
        });
    }
}
