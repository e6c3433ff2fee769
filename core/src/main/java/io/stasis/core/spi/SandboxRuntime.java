package io.stasis.core.spi;

import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.SandboxId;
import java.time.Duration;
import java.util.Set;

/**
 * Runs sandboxes: isolated process trees on a prepared root filesystem. Implementations own every
 * host resource they create for a sandbox (container state, cgroups, namespaces) and label it with
 * the sandbox id so that {@link #listOwned()} can find it after a crash of the service.
 *
 * <p>Sandboxes are not children of the service: they keep running when it stops.
 */
public interface SandboxRuntime {

    /**
     * Starts a sandbox.
     * <p>Prerequisites: {@code spec.root()} is a writable root filesystem owned by the runtime's
     * user namespace mapping; no sandbox with this id exists in the runtime.
     * <p>Effects on success: the sandbox runs its supervisor as process 1 and accepts {@link #spawn}.
     * <p>On failure: nothing of the sandbox is left in the runtime (the root is untouched).
     */
    void create(RuntimeSpec spec);

    /**
     * Starts one process inside a running sandbox.
     * <p>Effects on success: the process runs; its output goes to files inside the sandbox root,
     * so it outlives the service; the handle reads them.
     * <p>On failure: {@code runtime_failed} (or {@code invalid_request} for a bad working directory);
     * a program that cannot be executed yields a handle whose exit status is 127 or 126.
     */
    ExecHandle spawn(SandboxId id, SpawnSpec spec);

    /**
     * Changes the cgroup limits of a running sandbox.
     * <p>Effects on success: the new limits hold now and after any later restore of the sandbox.
     * <p>On failure: {@code invalid_request} if the sandbox already uses more memory than the new
     * limit, else {@code runtime_failed}; limits already changed stay changed.
     */
    void updateResources(SandboxId id, Resources resources);

    /** Whether the sandbox's process 1 is alive, gone, or the runtime does not know it. */
    RuntimeStatus status(SandboxId id);

    /**
     * Ends every process of the sandbox and removes what the runtime created for it. The root
     * filesystem is left alone. Idempotent: destroying an unknown sandbox does nothing.
     */
    void destroy(SandboxId id);

    /** Every sandbox this runtime has state for, alive or not (for reconciliation at start-up). */
    Set<SandboxId> listOwned();

    /** How long {@link #create} may take before it is considered failed. */
    default Duration startTimeout() {
        return Duration.ofSeconds(30);
    }

    enum RuntimeStatus { RUNNING, STOPPED, UNKNOWN }
}
