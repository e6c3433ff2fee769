package io.stasis.core.lifecycle;

import io.stasis.core.bucket.SandboxBuckets;
import io.stasis.core.checkpoint.Checkpoint;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.StasisException;
import io.stasis.core.events.EventLog;
import io.stasis.core.journal.FaultPoints;
import io.stasis.core.journal.Operation;
import io.stasis.core.network.NetworkService;
import io.stasis.core.policy.LifecyclePolicy;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.spi.Catalog;
import io.stasis.core.spi.RootStore;
import io.stasis.core.spi.RuntimeSpec;
import io.stasis.core.spi.SandboxRuntime;
import io.stasis.core.tenant.QuotaGuard;
import io.stasis.core.volume.SandboxVolumes;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiConsumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves sandboxes between states: pause (freeze), hibernate (process image on disk), resume, stop
 * and start. Each change holds the sandbox's lock exclusively and is journalled: the operation is
 * written before its first step and cleared in the transaction that records the outcome, so that
 * the {@link Reconciler} can settle a sandbox whose change a crash cut short.
 *
 * <p>Idempotent: asking for the state a sandbox is already in returns it unchanged.
 */
public final class LifecycleService {
    private static final Logger log = LoggerFactory.getLogger(LifecycleService.class);
    /** How long a stop lets processes end on SIGTERM before they are killed. */
    static final Duration STOP_GRACE = Duration.ofSeconds(10);

    private final Catalog catalog;
    private final RootStore roots;
    private final SandboxRuntime runtime;
    private final SandboxLocks locks;
    private final EventLog events;
    private final ActivityTracker activity;
    private final FaultPoints faults;
    private final Clock clock;
    private final NetworkService network;
    private final SandboxVolumes volumes;
    private final SandboxBuckets buckets;
    private final QuotaGuard quotas;

    private final BiConsumer<Checkpoint, Sandbox> afterHibernate;
    private final HibernationSource elsewhere;

    public LifecycleService(SandboxParts parts) {
        this(parts, (c, s) -> { }, HibernationSource.NONE);
    }

    /**
     * @param afterHibernate called under the sandbox's lock once a hibernation is recorded, with
     *                       its checkpoint and the sandbox as it was: the durable upload of
     *                       hibernations ({@code --hibernate-durable}) hooks in here. An exception
     *                       from it is logged; the sandbox stays hibernated.
     * @param elsewhere      where the image of a hibernated sandbox comes from when it is not here
     *                       (one adopted from a lost node)
     */
    public LifecycleService(SandboxParts parts, BiConsumer<Checkpoint, Sandbox> afterHibernate, HibernationSource elsewhere) {
        this.elsewhere = elsewhere;
        this.volumes = parts.volumes();
        this.buckets = parts.buckets();
        this.afterHibernate = afterHibernate;
        this.quotas = parts.quotas();
        this.catalog = parts.catalog();
        this.roots = parts.roots();
        this.runtime = parts.runtime();
        this.locks = parts.locks();
        this.events = parts.events();
        this.activity = parts.activity();
        this.faults = parts.faults();
        this.clock = parts.clock();
        this.network = parts.network();
    }

    /** Why a change happens, as events report it. */
    public enum Reason {
        API, IDLE, TTL;

        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private Sandbox current(SandboxId id) {
        return catalog.find(id).filter(s -> !(s.state() instanceof SandboxState.Deleted))
                .orElseThrow(() -> StasisException.sandboxNotFound(id.value()));
    }

    /** Freezes every process: memory stays, no CPU. */
    public Sandbox pause(SandboxId id, Reason reason) {
        return locks.exclusive(id, () -> {
            var sandbox = current(id);
            return switch (sandbox.state()) {
                case SandboxState.Paused p -> sandbox;
                case SandboxState.Running r -> transition(sandbox, Operation.Kind.PAUSE, Optional.empty(), SandboxState.PAUSED, reason, () -> {
                    runtime.freeze(id);
                    faults.reach("pause.after-freeze");
                });
                case SandboxState.Standby s -> throw StasisException.invalidState(id.value(), "standby", "pause (it is already asleep; resume it first)");
                case SandboxState.Hibernated h -> throw StasisException.invalidState(id.value(), "hibernated", "pause (it is already asleep; resume it first)");
                case SandboxState.Stopped s -> throw StasisException.invalidState(id.value(), "stopped", "pause");
                case SandboxState.Deleted d -> throw StasisException.sandboxNotFound(id.value());
            };
        });
    }

    /**
     * Freezes every process and gives its memory back to the host (swap): no CPU, almost no RAM,
     * back in milliseconds. Returns once frozen; the memory goes out in the background.
     */
    public Sandbox standby(SandboxId id, Reason reason) {
        return locks.exclusive(id, () -> {
            var sandbox = current(id);
            return switch (sandbox.state()) {
                case SandboxState.Standby s -> sandbox;
                case SandboxState.Running r -> standbyLocked(sandbox, reason);
                case SandboxState.Paused p -> standbyLocked(sandbox, reason);
                case SandboxState.Hibernated h -> throw StasisException.invalidState(id.value(), "hibernated", "standby (it is already asleep; resume it first)");
                case SandboxState.Stopped s -> throw StasisException.invalidState(id.value(), "stopped", "standby");
                case SandboxState.Deleted d -> throw StasisException.sandboxNotFound(id.value());
            };
        });
    }

    private Sandbox standbyLocked(Sandbox sandbox, Reason reason) {
        long start = System.nanoTime();
        var standby = transition(sandbox, Operation.Kind.STANDBY, Optional.empty(), SandboxState.STANDBY, reason, () -> {
            runtime.standby(sandbox.id());
            faults.reach("standby.after-freeze");
        });
        log.atInfo().addKeyValue("sandbox", sandbox.id()).addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("in standby");
        return standby;
    }

    /**
     * Brings the sandbox back to running: thaws a paused one or one in standby, restores a hibernated one's
     * processes, boots a stopped one on its root.
     */
    public Sandbox resume(SandboxId id, Reason reason) {
        return locks.exclusive(id, () -> resumeLocked(current(id), reason));
    }

    /**
     * {@link #resume}, unless the sandbox is at an older generation than {@code expectGeneration}
     * (the one its caller saw last): then {@code generation_mismatch}, and nothing changes. A newer
     * generation resumes (the idle policy may have moved it on since).
     */
    public Sandbox resume(SandboxId id, Reason reason, long expectGeneration) {
        return locks.exclusive(id, () -> {
            var sandbox = current(id);
            if (sandbox.generation() < expectGeneration)
                throw StasisException.generationMismatch(id.value(), expectGeneration, sandbox.generation());
            return resumeLocked(sandbox, reason);
        });
    }

    /** The same as {@link #resume}: whatever the sandbox's state, it ends up running. */
    public Sandbox start(SandboxId id, Reason reason) {
        return resume(id, reason);
    }

    private Sandbox resumeLocked(Sandbox asleep, Reason reason) {
        if (asleep.state() instanceof SandboxState.Running) return asleep;
        // Woken from the sleep its age limit chose: the new limit is recorded with the state, in one write.
        Sandbox sandbox = asleep.withLifecycle(asleep.lifecycle().wokenAt(Duration.between(asleep.createdAt(), clock.instant())));
        SandboxId id = sandbox.id();
        if (sandbox.state() instanceof SandboxState.Hibernated || sandbox.state() instanceof SandboxState.Stopped)
            quotas.requireRuntime(sandbox.tenant(), sandbox.runtime(), "start of " + id);
        return switch (sandbox.state()) {
            case SandboxState.Running r -> sandbox;
            case SandboxState.Paused p -> transition(sandbox, Operation.Kind.RESUME, Optional.empty(), SandboxState.RUNNING, reason, () -> {
                runtime.thaw(id);
                faults.reach("resume.after-thaw");
            });
            case SandboxState.Standby s -> transition(sandbox, Operation.Kind.RESUME, Optional.empty(), SandboxState.RUNNING, reason, () -> {
                runtime.thaw(id);
                faults.reach("resume.after-thaw");
            });
            // Hibernated and stopped sandboxes hold no memory: running again counts against the tenant's quota,
            // and starts their processes anew, in a runtime the tenant must still be allowed.
            case SandboxState.Hibernated h -> quotas.admit(sandbox.tenant(), SandboxService.demandOfResume(sandbox.resources(), buckets.bucketsOf(id).size()),
                    () -> restoreHibernated(sandbox, h, reason));
            case SandboxState.Stopped s -> quotas.admit(sandbox.tenant(), SandboxService.demandOfResume(sandbox.resources(), buckets.bucketsOf(id).size()),
                    () -> transition(sandbox, Operation.Kind.START, Optional.empty(), SandboxState.RUNNING, reason, () -> {
                        var spec = specOf(sandbox);
                        try {
                            DiskHeadroom.during(roots, sandbox, () -> runtime.create(spec));
                        } catch (RuntimeException e) {
                            buckets.discard(id, e);
                            throw e;
                        }
                        faults.reach("start.after-create");
                    }));
            case SandboxState.Deleted d -> throw StasisException.sandboxNotFound(id.value());
        };
    }

    private Sandbox restoreHibernated(Sandbox sandbox, SandboxState.Hibernated image, Reason reason) {
        SandboxId id = sandbox.id();
        long start = System.nanoTime();
        catalog.beginOperation(operation(id, Operation.Kind.RESTORE, Optional.of(image.checkpoint())));
        // An image that is not here is one of a sandbox adopted from a lost node: it comes from the durable store.
        boolean here = runtime.imageSize(image.checkpoint()).isPresent() && roots.root(id).isPresent();
        try (var fetched = here ? HibernationSource.Fetched.NOTHING : elsewhere.fetch(sandbox, image.checkpoint())) {
            DiskHeadroom.during(roots, sandbox, () -> runtime.restore(specOf(sandbox), image.checkpoint()));
        } catch (RuntimeException e) {
            // The image stays: the sandbox remains hibernated and the error is reported.
            buckets.discard(id, e);
            catalog.abandonOperation(id);
            events.append("error", Optional.of(id), Map.of("sandboxId", id.value(), "step", "restore",
                    "message", String.valueOf(e.getMessage())));
            throw e;
        }
        faults.reach("resume.after-restore");
        var running = sandbox.withState(SandboxState.RUNNING);
        catalog.completeOperation(running);
        faults.reach("resume.after-commit");
        discardCheckpoint(image.checkpoint());
        activity.touch(id);
        events.lifecycle(id, "hibernated", "running", reason.wireName());
        log.atInfo().addKeyValue("sandbox", id).addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("resumed from hibernation");
        return running;
    }

    /** Dumps every process to an image on disk (with a read-only snapshot of the root) and frees their memory. */
    public Sandbox hibernate(SandboxId id, Reason reason) {
        return locks.exclusive(id, () -> {
            var sandbox = current(id);
            return switch (sandbox.state()) {
                case SandboxState.Hibernated h -> sandbox;
                case SandboxState.Running r -> hibernateLocked(sandbox, reason);
                case SandboxState.Paused p -> hibernateLocked(sandbox, reason);
                case SandboxState.Standby s -> hibernateLocked(sandbox, reason);
                case SandboxState.Stopped s -> throw StasisException.invalidState(id.value(), "stopped", "hibernate");
                case SandboxState.Deleted d -> throw StasisException.sandboxNotFound(id.value());
            };
        });
    }

    private Sandbox hibernateLocked(Sandbox sandbox, Reason reason) {
        SandboxId id = sandbox.id();
        var checkpoint = CheckpointId.random();
        long start = System.nanoTime();
        boolean wasRunning = sandbox.state() instanceof SandboxState.Running;
        catalog.beginOperation(operation(id, Operation.Kind.HIBERNATE, Optional.of(checkpoint)));
        long bytes;
        try {
            roots.flush(id);
            runtime.freeze(id);
            buckets.requireNothingOpen(id, "hibernate");
            faults.reach("hibernate.after-freeze");
            bytes = runtime.checkpoint(id, checkpoint, false);
        } catch (RuntimeException e) {
            // A failed dump leaves the sandbox as it was.
            undoCheckpoint(checkpoint, e);
            if (wasRunning) thawQuietly(id, e);
            catalog.abandonOperation(id);
            throw e;
        }
        faults.reach("hibernate.after-dump");
        snapshotAfterDump(roots, id, checkpoint);
        faults.reach("hibernate.after-snapshot");
        var now = clock.instant();
        var image = new Checkpoint(checkpoint, id, Optional.empty(), true, Checkpoint.Purpose.HIBERNATION, bytes, now, sandbox.runtime());
        catalog.insertCheckpoint(image);
        faults.reach("hibernate.after-record");
        var hibernated = sandbox.withState(new SandboxState.Hibernated(checkpoint, bytes, now));
        catalog.completeOperation(hibernated);
        // CRIU took the bucket mounts as external mounts: no daemon per hibernated sandbox; the resume mounts them again.
        buckets.release(id);
        try {
            afterHibernate.accept(image, hibernated);
        } catch (RuntimeException e) {
            log.atWarn().addKeyValue("sandbox", id).addKeyValue("checkpoint", checkpoint).setCause(e)
                    .log("the durable upload of the hibernation failed; it stays local (a sync retries)");
        }
        events.lifecycle(id, sandbox.state().wireName(), "hibernated", reason.wireName());
        log.atInfo().addKeyValue("sandbox", id).addKeyValue("imageBytes", bytes)
                .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("hibernated");
        return hibernated;
    }

    /** Ends every process (SIGTERM, then SIGKILL after a grace period); the root stays. */
    public Sandbox stop(SandboxId id, Reason reason) {
        return locks.exclusive(id, () -> {
            var sandbox = current(id);
            return switch (sandbox.state()) {
                case SandboxState.Stopped s -> sandbox;
                case SandboxState.Running r -> stopLocked(sandbox, reason);
                case SandboxState.Paused p -> stopLocked(sandbox, reason);
                case SandboxState.Standby s -> stopLocked(sandbox, reason);
                case SandboxState.Hibernated h -> {
                    var stopped = transition(sandbox, Operation.Kind.STOP, Optional.of(h.checkpoint()), new SandboxState.Stopped(reason.wireName()),
                            reason, () -> { });
                    discardCheckpoint(h.checkpoint());
                    yield stopped;
                }
                case SandboxState.Deleted d -> throw StasisException.sandboxNotFound(id.value());
            };
        });
    }

    private Sandbox stopLocked(Sandbox sandbox, Reason reason) {
        var stopped = transition(sandbox, Operation.Kind.STOP, Optional.empty(), new SandboxState.Stopped(reason.wireName()), reason, () -> {
            try {
                runtime.stop(sandbox.id(), STOP_GRACE);
            } catch (RuntimeException e) {
                // Its processes may have had their SIGTERM already: a stop is finished, never undone (as
                // after a crash). A tool that failed on the way (runc delete killed) gets one more try.
                log.atWarn().addKeyValue("sandbox", sandbox.id()).addKeyValue("reason", e.getMessage()).log("stop failed; finishing it");
                runtime.destroy(sandbox.id());
            }
            faults.reach("stop.after-stop");
        });
        buckets.release(sandbox.id());
        return stopped;
    }

    /** Replaces the sandbox's idle policy. */
    public Sandbox updatePolicy(SandboxId id, LifecyclePolicy policy) {
        return locks.exclusive(id, () -> {
            var updated = current(id).withLifecycle(policy);
            catalog.update(updated);
            return updated;
        });
    }

    /**
     * Auto-resume: runs {@code action} on the sandbox once it runs, holding its lock shared so that
     * no state change interleaves. A paused, standby or hibernated sandbox is resumed first (unless its policy
     * turned auto-resume off); a stopped one is refused.
     */
    public <T> T withRunning(SandboxId id, String action, Function<Sandbox, T> use) {
        activity.touch(id);
        for (int attempt = 0; ; attempt++) {
            var result = locks.shared(id, () -> {
                var sandbox = current(id);
                return sandbox.state() instanceof SandboxState.Running ? Optional.of(use.apply(sandbox)) : Optional.<T>empty();
            });
            if (result.isPresent()) return result.get();
            var sandbox = current(id);
            if (sandbox.state() instanceof SandboxState.Stopped)
                throw StasisException.invalidState(id.value(), "stopped", action + " (start it first: POST /v1/sandboxes/" + id + "/start)");
            if (!sandbox.lifecycle().autoResume())
                throw StasisException.invalidState(id.value(), sandbox.state().wireName(), action + " (autoResume is off: resume it first)");
            if (attempt > 3) throw StasisException.invalidState(id.value(), sandbox.state().wireName(), action);
            resume(id, Reason.API);
        }
    }

    /**
     * The runtime spec of a sandbox as the catalog has it: its own root, its id as hostname, its
     * volumes, and its buckets, which this mounts on the host (those mounted already are kept).
     */
    RuntimeSpec specOf(Sandbox sandbox) {
        var root = roots.root(sandbox.id()).orElseThrow(() -> StasisException.runtimeFailed(sandbox.id().value(),
                "resume", "the sandbox's root filesystem is missing", null));
        var mounts = new ArrayList<>(volumes.hostMountsOf(sandbox.id()));
        mounts.addAll(buckets.mountRecorded(sandbox));
        return new RuntimeSpec(sandbox.id(), root, sandbox.id().hostname(), sandbox.resources(), network.linkOf(sandbox.id()), mounts,
                sandbox.runtime());
    }

    private Sandbox transition(Sandbox sandbox, Operation.Kind kind, Optional<CheckpointId> checkpoint, SandboxState target,
                               Reason reason, Runnable steps) {
        catalog.beginOperation(operation(sandbox.id(), kind, checkpoint));
        try {
            steps.run();
        } catch (RuntimeException e) {
            catalog.abandonOperation(sandbox.id());
            throw e;
        }
        var outcome = sandbox.withState(target);
        catalog.completeOperation(outcome);
        if (target instanceof SandboxState.Running) activity.touch(sandbox.id());
        events.lifecycle(sandbox.id(), sandbox.state().wireName(), target.wireName(), reason.wireName());
        return outcome;
    }

    private Operation operation(SandboxId id, Operation.Kind kind, Optional<CheckpointId> checkpoint) {
        return new Operation(id, kind, checkpoint, clock.instant());
    }

    /**
     * Removes a checkpoint's record, image and root snapshot (those that exist). A durable copy in
     * the blob store stays (a hibernation resumed here can still be restored elsewhere as it was).
     */
    void discardCheckpoint(CheckpointId checkpoint) {
        catalog.deleteCheckpoint(checkpoint);
        catalog.deleteUpload(checkpoint);
        runtime.deleteImage(checkpoint);
        roots.deleteSnapshot(checkpoint);
    }

    /**
     * The root's snapshot that goes with a hibernation's image (its durable copy is made of both),
     * taken once the dump has ended the processes: the root is then as the image needs it, where
     * a runtime may run them between the freeze and its dump (gVisor's init lets go of its socket).
     * The hibernation stands without it: its processes are in the image, its root in place.
     */
    static void snapshotAfterDump(RootStore roots, SandboxId id, CheckpointId checkpoint) {
        try {
            roots.snapshotRoot(id, checkpoint);
        } catch (RuntimeException e) {
            log.atWarn().addKeyValue("sandbox", id).addKeyValue("checkpoint", checkpoint).setCause(e)
                    .log("the hibernated root's snapshot failed; the hibernation stands, without a durable copy");
        }
    }

    private void undoCheckpoint(CheckpointId checkpoint, RuntimeException cause) {
        try {
            runtime.deleteImage(checkpoint);
            roots.deleteSnapshot(checkpoint);
        } catch (RuntimeException e) {
            cause.addSuppressed(e);
        }
    }

    private void thawQuietly(SandboxId id, RuntimeException cause) {
        try {
            runtime.thaw(id);
        } catch (RuntimeException e) {
            cause.addSuppressed(e);
        }
    }
}
