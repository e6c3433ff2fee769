package io.stasis.core.spi;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.SandboxId;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Runs sandboxes: isolated process trees on a prepared root filesystem, which it can freeze, dump
 * to an image and restore from one. Implementations own every host resource they create for a
 * sandbox (container state, cgroups, namespaces, images) and label it with the sandbox or
 * checkpoint id, so that {@link #listOwned()} and {@link #listImages()} find it after a crash.
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
     * Starts one process inside a running sandbox.
     * <p>Effects on success: the process runs; its output goes to files inside the sandbox root,
     * so it outlives the service; the handle reads them.
     * <p>On failure: {@code runtime_failed} (or {@code invalid_request} for a bad working directory);
     * a program that cannot be executed yields a handle whose exit status is 127 or 126.
     */
    ExecHandle spawn(SandboxId id, SpawnSpec spec);

    /**
     * Starts a process that outlives the call (a background process). Its output and exit status
     * stay in files inside the sandbox, beside {@code label} (the caller's description of it, opaque
     * to the runtime), so that it is found again after a restart of the service, in a hibernated
     * and resumed sandbox, and in every fork.
     * <p>Errors: as {@link #spawn}. Returns its pid as the sandbox sees it.
     */
    long startProcess(SandboxId id, String processId, SpawnSpec spec, byte[] label);

    /** The background processes of a sandbox, running or ended, in no particular order. */
    List<ProcessEntry> processes(SandboxId id);

    /**
     * A handle on a background process: its output and its exit. Closing the handle leaves the
     * process and its files; {@link ExecHandle#killTree} ends it and what it started.
     */
    ExecHandle attach(SandboxId id, String processId);

    /** Sends a signal to one process of the sandbox ({@code pid} as the sandbox sees it). */
    void signal(SandboxId id, long pid, int signal);

    /**
     * Writes to the standard input of a background process started with a stdin pipe (or a
     * terminal). Waits, up to a bound, while the pipe is full.
     * <p>Errors: {@code invalid_state} when the process has no open stdin (it ended, or stdin was
     * closed, or it never had a pipe).
     */
    void writeStdin(SandboxId id, String processId, byte[] data);

    /** Closes a background process's standard input: it reads end of file once it has read what was written. */
    void closeStdin(SandboxId id, String processId);

    /** Changes the window size of a process's terminal (its foreground job gets SIGWINCH). */
    void resizeTerminal(SandboxId id, String processId, SpawnSpec.TerminalSize size);

    /** Removes a background process's files (its output, its exit status). */
    void forgetProcess(SandboxId id, String processId);

    /**
     * Changes the cgroup limits of a running sandbox.
     * <p>Effects on success: the new limits hold now and after any later restore of the sandbox.
     * <p>On failure: {@code invalid_request} if the sandbox already uses more memory than the new
     * limit, else {@code runtime_failed}; limits already changed stay changed.
     */
    void updateResources(SandboxId id, Resources resources);

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

    /** Bytes of memory the sandbox holds in RAM now (its cgroup's charge). */
    long residentBytes(SandboxId id);

    /** Bytes of the sandbox's memory in swap now. */
    long swappedBytes(SandboxId id);

    /**
     * Dumps the sandbox's whole process tree (memory, files, pipes, sockets, ptys) to the image
     * {@code image}.
     * <p>Prerequisites: the sandbox runs or is frozen; {@code image} does not exist.
     * <p>Effects on success: the image is complete; with {@code leaveRunning} the sandbox is as
     * before (frozen stays frozen), without it its processes are gone and the runtime no longer
     * holds it (as after {@link #destroy}). Returns the image's size in bytes.
     * <p>On failure: no image is left and the sandbox is as before.
     */
    long checkpoint(SandboxId id, CheckpointId image, boolean leaveRunning);

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

    /** The size in bytes of the complete image with this id; empty if it is missing or incomplete. */
    OptionalLong imageSize(CheckpointId image);

    /**
     * Serializes a complete image for durable storage, in a format of this runtime's own that
     * {@link #importImage} reads back (here or on another host with the same runtime).
     * <p>Prerequisites: the image is complete.
     * <p>Effects on success: {@code reader} has read the whole stream; returns what it returned.
     * <p>On failure: {@code runtime_failed}; the image is untouched.
     */
    <R> R exportImage(CheckpointId image, StreamReader<R> reader);

    /**
     * Recreates an image from a stream made by {@link #exportImage}.
     * <p>Prerequisites: no image {@code image} exists here.
     * <p>Effects on success: the image is complete and can be restored; returns its size in bytes.
     * <p>On failure: {@code runtime_failed}; no image is left.
     */
    long importImage(CheckpointId image, InputStream stream);

    /** Removes an image. Idempotent. */
    void deleteImage(CheckpointId image);

    /** Every image this runtime holds, complete or not (for reconciliation). */
    Set<CheckpointId> listImages();

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
     * An image whose dump ran to its end after the service died, before the service could mark it
     * complete: marked now if the checkpointing tool says the dump finished (a dump that does not
     * leave the sandbox running has ended its processes by then: the image is all that holds them).
     * Returns its size, or empty if the dump did not finish. For the reconciler, after
     * {@link #awaitEarlierWork}.
     */
    OptionalLong completeInterruptedDump(CheckpointId image);

    /** CPU time used by all the sandbox's processes so far, for idle detection. */
    Duration cpuUsage(SandboxId id);

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
