package io.stasis.core.spi;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.SandboxId;
import java.nio.file.Path;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Runs sandboxes: isolated process trees on a prepared root filesystem, which it can freeze, dump
 * to an image and restore from one. Implementations own every host resource they create for a
 * sandbox (container state, cgroups, namespaces, images) and label it with the sandbox or
 * checkpoint id, so that {@link #listOwned()} and {@link #listImages()} find it after a crash.
 * Its roles ({@link SandboxProcesses}, {@link RuntimeImages}, {@link SandboxMeters}) are taken
 * alone by the services that need only them.
 *
 * <p>Sandboxes are not children of the service: they keep running when it stops.
 */
public interface SandboxRuntime extends SandboxProcesses, RuntimeImages, SandboxMeters {

    /**
     * Starts a sandbox.
     * <p>Prerequisites: {@code spec.root()} is a writable root filesystem owned by the runtime's
     * user namespace mapping; no sandbox with this id exists in the runtime.
     * <p>Effects on success: the sandbox runs its supervisor as process 1 and accepts {@link #spawn}.
     * <p>On failure: nothing of the sandbox is left in the runtime (the root is untouched).
     */
    void create(RuntimeSpec spec);

    /** Whether {@link #reroot} is supported. */
    default boolean canReroot() {
        return false;
    }

    /**
     * Gives a running sandbox the root filesystem {@code newRoot} in place of the one it was started
     * on, as if it had been started on it: how a sandbox started ahead of demand becomes a fork of a
     * files checkpoint without a start of its own.
     * <p>Prerequisites: {@link #canReroot()}; the sandbox runs its supervisor and nothing else, and
     * mounts nothing of its own (no volumes); {@code newRoot} is a root made for it, like the one
     * given to {@link #create}, at the path where the sandbox's root is found from now on.
     * <p>Effects on success: the sandbox's processes see {@code newRoot} as their root, with the same
     * kernel filesystems and mounts on top of it as before; what is spawned from now on runs in it
     * and keeps its output there. The old root is no longer used by the sandbox (the caller removes it).
     * <p>On failure: {@code runtime_failed}; the sandbox may be unusable and must be destroyed.
     */
    default void reroot(SandboxId id, Path newRoot) {
        throw new UnsupportedOperationException("this runtime cannot give a running sandbox a new root");
    }

    /**
     * Changes the cgroup limits of a running sandbox.
     * <p>Effects on success: the new limits hold now and after any later restore of the sandbox.
     * <p>On failure: {@code invalid_request} if the sandbox already uses more memory than the new
     * limit, else {@code runtime_failed}; limits already changed stay changed.
     */
    void updateResources(SandboxId id, Resources resources);

    /**
     * Runs a sandbox started {@linkplain RuntimeSpec#background in the background} at the usual CPU
     * weight from now on, thawed if it waited frozen: it has an owner. Microseconds to a few
     * milliseconds (cgroup files). Idempotent; a sandbox started otherwise is left as it is.
     */
    void foreground(SandboxId id);

    /**
     * Freezes every process of the sandbox (cgroup freezer): no CPU, memory stays. Idempotent.
     * <p>Effects on success: returns once every task is frozen.
     */
    void freeze(SandboxId id);

    /**
     * Lets a frozen sandbox run again. Idempotent. From standby, a page-out still under way stops
     * first; the memory then comes back as the processes touch it (the small mappings at once, in
     * the background).
     */
    void thaw(SandboxId id);

    /**
     * Freezes the sandbox as {@link #freeze} does, then gives its memory back to the host: its
     * pages go to swap and the sandbox's cgroup is reclaimed.
     * <p>Prerequisites: the sandbox runs or is frozen.
     * <p>Effects on success: returns once every task is frozen; the memory goes out in the
     * background (a {@link #thaw} meanwhile stops that). Without swap on the host, nothing but the
     * page cache goes.
     * <p>On failure: as {@link #freeze}; a page-out that fails leaves the sandbox frozen.
     */
    void standby(SandboxId id);

    /**
     * Dumps the sandbox's whole process tree (memory, files, pipes, sockets, ptys) to the image
     * {@code image}.
     * <p>Prerequisites: the sandbox runs or is frozen; {@code image} does not exist.
     * <p>Effects on success: the image is complete; with {@code leaveRunning} the sandbox is as
     * before (frozen stays frozen), without it its processes are gone and its status is
     * {@code UNKNOWN} until a restore (what the runtime keeps on disk for it, such as its logs, stays
     * in {@link #listOwned()} until {@link #destroy}). Returns the image's size in bytes.
     * <p>On failure: no image is left and the sandbox is as before.
     */
    long checkpoint(SandboxId id, CheckpointId image, boolean leaveRunning);

    /**
     * As {@link #checkpoint(SandboxId, CheckpointId, boolean)} with {@code leaveRunning}, running
     * {@code atRest} once while the sandbox's processes are stopped where the image holds them and
     * their files are as the image needs them: before the dump, or after it where the dump writes
     * back file data the runtime cached (gVisor's save does). The files a caller snapshots there go
     * with the image: a copy restored from both finds every file its processes held open and every
     * write they made. A failure of {@code atRest} fails the checkpoint: no image is left and the
     * sandbox is as before.
     */
    long checkpoint(SandboxId id, CheckpointId image, Runnable atRest);

    /**
     * Starts {@code spec.id()} from an image: the same sandbox after a hibernation, or a new one
     * (a fork) on a root branched from the checkpoint's root snapshot.
     * <p>Prerequisites: the image is complete; no sandbox {@code spec.id()} exists in the runtime;
     * the root holds the files as they were when the image was taken.
     * <p>Effects on success: the processes run on from where they were, under {@code spec}'s
     * limits and hostname. The image is untouched and may be restored again.
     * <p>On failure: nothing of the sandbox is left in the runtime; the image stays intact.
     */
    void restore(RuntimeSpec spec, CheckpointId image);

    /** Whether the sandbox's process 1 is alive (and whether frozen), gone, or unknown to the runtime. */
    RuntimeStatus status(SandboxId id);

    /**
     * Waits, up to {@code timeout}, until no tool started by an earlier run of the service is still
     * at work (a dump, a restore, a start that its crash cut off from its caller, which goes on
     * without it). The reconciler calls it first, so that it settles each sandbox on the outcome of
     * such work and not on its middle: a dump seen half way looks like a frozen sandbox, and
     * thawing it under CRIU ends its processes. Returns how many were still at work.
     */
    int awaitEarlierWork(Duration timeout);

    /**
     * An image of {@code sandbox} whose dump ran to its end after the service died, before the
     * service could mark it complete: marked now if the checkpointing tool says the dump finished
     * (a dump that does not leave the sandbox running has ended its processes by then: the image is
     * all that holds them). Returns its size, or empty if the dump did not finish. For the
     * reconciler, after {@link #awaitEarlierWork}.
     */
    OptionalLong completeInterruptedDump(SandboxId sandbox, CheckpointId image);

    /**
     * The reconciler found the sandbox's processes alive after a restart and keeps them running:
     * the runtime finishes what an earlier run of the service left half done to them (under gVisor,
     * a checkpoint cut short leaves stasis-init without its socket; the reconciler's thaw has run
     * the tasks runsc held for the save). After {@link #awaitEarlierWork}.
     * It does not throw: what it cannot finish, it logs, and the sandbox is kept as found.
     */
    default void adopt(SandboxId id) {
    }

    /**
     * Asks every process of the sandbox to end (SIGTERM), waits up to {@code grace}, then ends what
     * is left and removes what the runtime holds for it, as {@link #destroy} does.
     */
    void stop(SandboxId id, Duration grace);

    /**
     * Ends every process of the sandbox and removes what the runtime created for it, except images.
     * The root filesystem is left alone. Idempotent: destroying an unknown sandbox does nothing.
     */
    void destroy(SandboxId id);

    /** Every sandbox this runtime has state for, alive or not (for reconciliation at start-up). */
    Set<SandboxId> listOwned();

    /** How long {@link #create} may take before it is considered failed. */
    default Duration startTimeout() {
        return Duration.ofSeconds(30);
    }

    enum RuntimeStatus { RUNNING, FROZEN, STOPPED, UNKNOWN }
}
