package io.stasis.core.sandbox;

import io.stasis.core.checkpoint.CheckpointId;
import java.time.Instant;
import java.util.Objects;

/**
 * Where a sandbox is in its life. Each state holds only what is true in it; switches over it are
 * exhaustive, so a new state cannot be forgotten by the code that handles states.
 *
 * <pre>
 * running <-> paused          (cgroup freezer: memory stays, no CPU)
 * running|paused -> standby -> running      (frozen, memory paged out to swap: little RAM, no CPU)
 * running|paused|standby -> hibernated -> running   (process image on disk, no memory)
 * running|paused|standby|hibernated -> stopped -> running   (processes gone, root kept)
 * any -> deleted
 * </pre>
 */
public sealed interface SandboxState {
    /** The processes run. */
    record Running() implements SandboxState {
    }

    /** Every process is frozen; memory stays resident; no CPU is used. */
    record Paused() implements SandboxState {
    }

    /**
     * Every process is frozen and its memory has been given back to the host (paged out to the
     * service's swap); no CPU, almost no RAM. Resuming thaws it; the memory comes back as it is touched.
     */
    record Standby() implements SandboxState {
    }

    /** The processes are an image on disk ({@code checkpoint}); their memory is freed. */
    record Hibernated(CheckpointId checkpoint, long imageBytes, Instant at) implements SandboxState {
        public Hibernated {
            Objects.requireNonNull(checkpoint);
            Objects.requireNonNull(at);
        }
    }

    /** No process runs; the root filesystem is kept. {@code reason} says how it got here. */
    record Stopped(String reason) implements SandboxState {
    }

    /** Being torn down, or gone; kept only while the teardown finishes. */
    record Deleted() implements SandboxState {
    }

    Running RUNNING = new Running();
    Paused PAUSED = new Paused();
    Standby STANDBY = new Standby();
    Deleted DELETED = new Deleted();

    /** The name on the wire and in the catalog. */
    default String wireName() {
        return switch (this) {
            case Running r -> "running";
            case Paused p -> "paused";
            case Standby s -> "standby";
            case Hibernated h -> "hibernated";
            case Stopped s -> "stopped";
            case Deleted d -> "deleted";
        };
    }

    /** Whether it sleeps in a state a call wakes it from: paused, in standby or hibernated. */
    default boolean asleep() {
        return this instanceof Paused || this instanceof Standby || this instanceof Hibernated;
    }

    /** Whether processes exist (running or frozen), so that the runtime holds the sandbox. */
    default boolean hasProcesses() {
        return this instanceof Running || this instanceof Paused || this instanceof Standby;
    }
}
