package io.stasis.core.lifecycle;

import io.stasis.core.checkpoint.Checkpoint;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.events.EventLog;
import io.stasis.core.journal.Operation;
import io.stasis.core.network.NetworkService;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.spi.Catalog;
import io.stasis.core.spi.RootStore;
import io.stasis.core.spi.SandboxRuntime;
import io.stasis.core.spi.SandboxRuntime.RuntimeStatus;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings catalog, runtime and disk into agreement at start-up, as after a crash at any step of any
 * operation or a host reboot. What exists decides: a sandbox with live processes is running or
 * paused (by its freezer), one without processes is hibernated if a complete image of it exists
 * and stopped otherwise. Operations in progress are settled in their old or their new state, and
 * artifacts nothing refers to (half-made images and snapshots, roots and containers of sandboxes
 * the catalog does not know) are removed.
 */
public final class Reconciler {
    private static final Logger log = LoggerFactory.getLogger(Reconciler.class);
    /** Longer than any dump or restore takes (the runtime's own timeout for one is 30 s). */
    private static final Duration EARLIER_WORK_TIMEOUT = Duration.ofMinutes(2);

    private final Catalog catalog;
    private final RootStore roots;
    private final SandboxRuntime runtime;
    private final EventLog events;
    private final Clock clock;
    private final NetworkService network;

    public Reconciler(Catalog catalog, RootStore roots, SandboxRuntime runtime, EventLog events, Clock clock, NetworkService network) {
        this.catalog = catalog;
        this.roots = roots;
        this.runtime = runtime;
        this.events = events;
        this.clock = clock;
        this.network = network;
    }

    /** What a reconciliation did. */
    public record Report(int adopted, int changed, int deletesFinished, int operationsSettled, int orphansRemoved) {
    }

    public Report reconcile() {
        int awaited = runtime.awaitEarlierWork(EARLIER_WORK_TIMEOUT);
        if (awaited > 0) log.atInfo().addKeyValue("tools", awaited).log("waited for the runtime work an earlier run left going");
        Map<SandboxId, Operation> pending = catalog.pendingOperations().stream()
                .collect(Collectors.toMap(Operation::sandbox, Function.identity(), (a, b) -> b));
        int adopted = 0, changed = 0, finished = 0, settled = 0, orphans = 0, limited = 0;
        var known = new HashSet<SandboxId>();
        for (var sandbox : catalog.all()) {
            known.add(sandbox.id());
            if (sandbox.state() instanceof SandboxState.Deleted) {
                finishDelete(sandbox.id());
                finished++;
                continue;
            }
            var operation = Optional.ofNullable(pending.remove(sandbox.id()));
            var outcome = settle(sandbox, operation);
            // A checkpoint recorded before the crash counts like one whose operation completed.
            if (operation.filter(o -> o.kind() == Operation.Kind.CHECKPOINT).flatMap(Operation::checkpoint)
                    .flatMap(catalog::findCheckpoint).isPresent()) outcome = outcome.nextGeneration();
            if (limitDisk(outcome)) limited++;
            if (operation.isPresent()) {
                catalog.completeOperation(outcome);
                settled++;
            } else if (!outcome.equals(sandbox)) catalog.update(outcome);
            if (!outcome.state().wireName().equals(sandbox.state().wireName())) {
                changed++;
                events.lifecycle(sandbox.id(), sandbox.state().wireName(), outcome.state().wireName(), "recovery");
            } else if (outcome.state().hasProcesses()) adopted++;
        }
        for (var leftover : pending.values()) catalog.abandonOperation(leftover.sandbox());
        orphans += removeOrphanSandboxes(known);
        orphans += removeOrphanCheckpoints();
        orphans += network.removeOrphans(known);
        var report = new Report(adopted, changed, finished, settled, orphans);
        log.atInfo().addKeyValue("adopted", adopted).addKeyValue("changed", changed).addKeyValue("deletesFinished", finished)
                .addKeyValue("operationsSettled", settled).addKeyValue("orphansRemoved", orphans)
                .addKeyValue("diskLimitsApplied", limited).log("reconciled");
        return report;
    }

    private Sandbox settle(Sandbox sandbox, Optional<Operation> operation) {
        SandboxId id = sandbox.id();
        if (roots.root(id).isEmpty()) {
            runtime.destroy(id);
            return sandbox.withState(new SandboxState.Stopped("root_missing"));
        }
        if (operation.filter(o -> o.kind() == Operation.Kind.STOP).isPresent()) {
            // A stop cut short may have ended some of the processes already (SIGTERM goes to all of them):
            // it is finished, never undone, or the sandbox would run on without them.
            runtime.destroy(id);
            return sandbox.withState(new SandboxState.Stopped("recovery"));
        }
        var status = runtime.status(id);
        return switch (status) {
            case RUNNING -> {
                runtime.adopt(id);
                yield backToRestIfWoken(sandbox, operation);
            }
            case FROZEN -> {
                // Frozen on purpose only when paused or in standby, or when the crash came mid-pause or
                // mid-standby: anything else (a checkpoint or hibernation cut short) goes back to running.
                // A standby's page-out may have been cut short too: it runs again.
                if (sandbox.state() instanceof SandboxState.Standby
                        || operation.map(o -> o.kind() == Operation.Kind.STANDBY).orElse(false)) {
                    runtime.standby(id);
                    yield sandbox.withState(SandboxState.STANDBY);
                }
                boolean paused = sandbox.state() instanceof SandboxState.Paused
                        || operation.map(o -> o.kind() == Operation.Kind.PAUSE).orElse(false);
                if (paused) yield sandbox.withState(SandboxState.PAUSED);
                runtime.thaw(id);
                runtime.adopt(id);
                yield sandbox.withState(SandboxState.RUNNING);
            }
            case STOPPED, UNKNOWN -> {
                runtime.destroy(id);
                yield withoutProcesses(sandbox, operation);
            }
        };
    }

    /**
     * A sandbox paused or in standby that runs: a runtime that must thaw one to save it (gVisor's
     * init lets go of its socket for the save) was cut short in a checkpoint, hibernation or fork of
     * it. It goes back to rest, its old state; only a resume cut short leaves it running, its new one.
     */
    private Sandbox backToRestIfWoken(Sandbox sandbox, Optional<Operation> operation) {
        boolean resuming = operation.map(o -> o.kind() == Operation.Kind.RESUME).orElse(false);
        if (resuming) return sandbox.withState(SandboxState.RUNNING);
        return switch (sandbox.state()) {
            case SandboxState.Paused paused -> {
                runtime.freeze(sandbox.id());
                yield sandbox;
            }
            case SandboxState.Standby standby -> {
                runtime.standby(sandbox.id());
                yield sandbox;
            }
            default -> sandbox.withState(SandboxState.RUNNING);
        };
    }

    /**
     * Sets the root's disk limit to the recorded one: roots made before there were disk limits
     * (their catalog rows got the default) or on a pool whose quotas were turned off meanwhile get
     * theirs. Idempotent; a failure is logged and leaves the sandbox as it was, it does not stop
     * the service from starting.
     */
    private boolean limitDisk(Sandbox sandbox) {
        if (roots.root(sandbox.id()).isEmpty()) return false;
        try {
            roots.limitRoot(sandbox.id(), sandbox.resources().diskBytes());
            return true;
        } catch (RuntimeException e) {
            log.atWarn().addKeyValue("sandbox", sandbox.id()).addKeyValue("diskMb", sandbox.resources().diskMb()).setCause(e)
                    .log("could not apply the disk limit to the sandbox's root; it keeps the limit it had");
            return false;
        }
    }

    /**
     * A sandbox whose processes are gone: hibernated if a complete image holds them (here, or in the
     * durable store for one adopted from a lost node), else stopped.
     */
    private Sandbox withoutProcesses(Sandbox sandbox, Optional<Operation> operation) {
        if (sandbox.state() instanceof SandboxState.Hibernated h && runtime.imageSize(h.checkpoint()).isPresent()) return sandbox;
        if (sandbox.state() instanceof SandboxState.Hibernated h
                && catalog.durableImage(sandbox.id()).filter(d -> d.checkpoint().equals(h.checkpoint())).isPresent()) return sandbox;
        if (operation.isPresent() && operation.get().kind() == Operation.Kind.HIBERNATE && operation.get().checkpoint().isPresent()) {
            CheckpointId checkpoint = operation.get().checkpoint().get();
            // The dump may have ended after the crash, unmarked: the processes are then in the image only.
            var size = runtime.completeInterruptedDump(sandbox.id(), checkpoint);
            if (size.isPresent()) {
                if (!roots.hasSnapshot(checkpoint)) LifecycleService.snapshotAfterDump(roots, sandbox.id(), checkpoint); // the crash came before it
                var at = clock.instant();
                if (catalog.findCheckpoint(checkpoint).isEmpty())
                    catalog.insertCheckpoint(new Checkpoint(checkpoint, sandbox.id(), Optional.empty(), true,
                            Checkpoint.Purpose.HIBERNATION, size.getAsLong(), at, sandbox.runtime()));
                return sandbox.withState(new SandboxState.Hibernated(checkpoint, size.getAsLong(), at));
            }
        }
        if (sandbox.state() instanceof SandboxState.Stopped) return sandbox;
        return sandbox.withState(new SandboxState.Stopped("processes_lost"));
    }

    private void finishDelete(SandboxId id) {
        runtime.destroy(id);
        roots.deleteRoot(id);
        for (var checkpoint : catalog.checkpointsOf(id)) discard(checkpoint.id());
        catalog.delete(id);
    }

    private int removeOrphanSandboxes(Set<SandboxId> known) {
        int removed = 0;
        for (var id : runtime.listOwned()) {
            if (known.contains(id)) continue;
            // A sandbox another node adopted: its cgroups are named as here, so on a host several nodes
            // share, destroying would end that node's processes. What is left here is only files.
            if (catalog.nodeOf(id).isPresent()) continue;
            runtime.destroy(id);
            removed++;
        }
        for (var id : roots.listRoots()) {
            if (known.contains(id)) continue;
            roots.deleteRoot(id);
            removed++;
        }
        return removed;
    }

    /**
     * Checkpoints are recorded only once complete: images and snapshots without a record are
     * leftovers of a checkpoint a crash cut short; a record whose snapshot is gone is broken.
     * Hibernation checkpoints of sandboxes that are no longer hibernated are done with.
     */
    private int removeOrphanCheckpoints() {
        var hibernatedOn = new HashMap<CheckpointId, SandboxId>();
        for (var sandbox : catalog.all())
            if (sandbox.state() instanceof SandboxState.Hibernated h) hibernatedOn.put(h.checkpoint(), sandbox.id());
        var recorded = new HashSet<CheckpointId>();
        int removed = 0;
        for (var checkpoint : catalog.allCheckpoints()) {
            boolean stale = checkpoint.purpose() == Checkpoint.Purpose.HIBERNATION && !hibernatedOn.containsKey(checkpoint.id());
            boolean broken = !roots.hasSnapshot(checkpoint.id()) || (checkpoint.memory() && runtime.imageSize(checkpoint.id()).isEmpty());
            if (stale || broken) {
                if (broken && !stale) log.atWarn().addKeyValue("checkpoint", checkpoint.id()).log("checkpoint lost its files; forgetting it");
                discard(checkpoint.id());
                removed++;
            } else recorded.add(checkpoint.id());
        }
        for (var image : runtime.listImages()) {
            if (recorded.contains(image)) continue;
            runtime.deleteImage(image);
            removed++;
        }
        for (var snapshot : roots.listSnapshots()) {
            if (recorded.contains(snapshot)) continue;
            roots.deleteSnapshot(snapshot);
            removed++;
        }
        return removed;
    }

    private void discard(CheckpointId id) {
        catalog.deleteCheckpoint(id);
        catalog.deleteUpload(id);
        runtime.deleteImage(id);
        roots.deleteSnapshot(id);
    }
}
