package io.stasis.core.checkpoint;

import io.stasis.core.bucket.SandboxBuckets;
import io.stasis.core.concurrent.KeyedLock;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.events.EventLog;
import io.stasis.core.journal.FaultPoints;
import io.stasis.core.journal.Operation;
import io.stasis.core.lifecycle.ActivityTracker;
import io.stasis.core.lifecycle.DiskHeadroom;
import io.stasis.core.lifecycle.ForkSpares;
import io.stasis.core.lifecycle.LifecycleService;
import io.stasis.core.lifecycle.RestoreTurns;
import io.stasis.core.lifecycle.SandboxLocks;
import io.stasis.core.lifecycle.SandboxParts;
import io.stasis.core.lifecycle.SandboxService;
import io.stasis.core.lifecycle.WarmPool;
import io.stasis.core.network.NetworkService;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxName;
import io.stasis.core.sandbox.SandboxSpec;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.spi.Catalog;
import io.stasis.core.spi.RootStore;
import io.stasis.core.spi.RuntimeSpec;
import io.stasis.core.spi.SandboxRuntime;
import io.stasis.core.tenant.QuotaGuard;
import io.stasis.core.tenant.TenantId;
import io.stasis.core.tenant.TenantUsage;
import io.stasis.core.volume.SandboxVolumes;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checkpoints (a read-only root snapshot, and with memory an image of the processes) and forks
 * (new sandboxes branched from a checkpoint, each with its own root and namespaces, diverging from
 * there). A checkpoint becomes visible only once complete; a crash before that leaves artifacts
 * the reconciler removes.
 */
public final class CheckpointService {
    private static final Logger log = LoggerFactory.getLogger(CheckpointService.class);
    public static final int MAX_FORKS = 100;

    private final Catalog catalog;
    private final RootStore roots;
    private final SandboxRuntime runtime;
    private final SandboxLocks locks;
    private final LifecycleService lifecycle;
    private final EventLog events;
    private final ActivityTracker activity;
    private final FaultPoints faults;
    private final Clock clock;
    private final NetworkService network;
    private final SandboxVolumes volumes;
    private final SandboxBuckets buckets;
    private final QuotaGuard quotas;
    private final DurableCheckpoints durable;
    private final WarmPool pool;
    private final ForkSpares spares;
    private final RestoreTurns turns;
    private final SandboxParts parts;
    /** One restore of a given durable checkpoint at a time here: they would receive the same snapshots. */
    private final KeyedLock<CheckpointId> restoring = new KeyedLock<>();

    public CheckpointService(SandboxParts parts, LifecycleService lifecycle, DurableCheckpoints durable,
                             WarmPool pool, ForkSpares spares, RestoreTurns turns) {
        this.pool = pool;
        this.spares = spares;
        this.turns = turns;
        this.parts = parts;
        this.volumes = parts.volumes();
        this.buckets = parts.buckets();
        this.quotas = parts.quotas();
        this.durable = durable;
        this.catalog = parts.catalog();
        this.roots = parts.roots();
        this.runtime = parts.runtime();
        this.locks = parts.locks();
        this.lifecycle = lifecycle;
        this.events = parts.events();
        this.activity = parts.activity();
        this.faults = parts.faults();
        this.clock = parts.clock();
        this.network = parts.network();
    }

    /**
     * Takes a checkpoint. Without memory: a root snapshot taken while the processes are frozen for
     * an instant (crash-consistent). With memory: also an image of the processes, which keep
     * running. A hibernated sandbox is resumed first when memory is asked for.
     */
    public Checkpoint create(SandboxId id, Optional<String> name, boolean memory) {
        return create(id, name, memory, false);
    }

    /**
     * Takes a checkpoint and copies it to the durable store: before returning if {@code waitDurable},
     * else in the background ({@link DurableCheckpoints}). With {@code waitDurable}, a failed upload
     * fails the call ({@code runtime_failed}) but the local checkpoint stays.
     */
    public Checkpoint create(SandboxId id, Optional<String> name, boolean memory, boolean waitDurable) {
        return create(id, name, memory, waitDurable, 0);
    }

    /** As {@link #create(SandboxId, Optional, boolean, boolean)}, keeping {@code spares} forks of it restored ahead ({@link #setSpares}). */
    public Checkpoint create(SandboxId id, Optional<String> name, boolean memory, boolean waitDurable, int spares) {
        name.ifPresent(n -> {
            if (n.isBlank() || n.length() > 128) throw StasisException.invalid("name", "must be 1-128 characters");
        });
        if (spares != 0) checkSpares(current(id), memory, spares);
        activity.touch(id);
        if (memory) lifecycle.withRunning(id, "checkpoint", s -> s);
        var made = locks.exclusive(id, () -> take(current(id), name, memory, Checkpoint.Purpose.USER));
        var sandbox = current(id);
        if (spares != 0) wantSpares(made, sandbox, spares);
        if (waitDurable) durable.upload(made, sandbox);
        else durable.afterCheckpoint(made, sandbox);
        return made;
    }

    /**
     * A durability checkpoint of a running sandbox (its policy's {@code checkpointEvery}; see
     * {@link DurabilityKeeper}): with memory, in the durable store before it returns ({@code runtime_failed}
     * if the upload fails; the local checkpoint stays), and not counted as use of the sandbox, so that
     * its idle policy goes on. Then the sandbox's older durability checkpoints go.
     *
     * @throws StasisException {@code invalid_state} unless the sandbox is running
     */
    public Checkpoint keepDurable(SandboxId id) {
        var made = locks.exclusive(id, () -> {
            var sandbox = current(id);
            if (!(sandbox.state() instanceof SandboxState.Running))
                throw StasisException.invalidState(id.value(), sandbox.state().wireName(), "take a durability checkpoint");
            return take(sandbox, Optional.empty(), true, Checkpoint.Purpose.DURABILITY);
        });
        durable.upload(made, current(id));
        for (var older : catalog.checkpointsOf(id)) {
            if (older.purpose() == Checkpoint.Purpose.DURABILITY && !older.id().equals(made.id())) delete(older.id());
        }
        return made;
    }

    /**
     * Keeps {@code count} forks of a memory checkpoint restored ahead, in standby, so that a fork of
     * it only thaws one ({@link ForkSpares}); 0 ends them. The count is kept in the catalog, and
     * the service restores the spares again after a restart.
     */
    public Checkpoint setSpares(CheckpointId id, int count) {
        var checkpoint = get(id);
        if (checkpoint.purpose() == Checkpoint.Purpose.HIBERNATION) throw notFound(id.value());
        var sandbox = current(checkpoint.sandboxId());
        if (count != 0) checkSpares(sandbox, checkpoint.memory(), count);
        return locks.exclusive(sandbox.id(), () -> {
            var still = get(id);
            wantSpares(still, current(sandbox.id()), count);
            return still;
        });
    }

    /** Spares of the checkpoint: how many it wants, and how many are ready now. */
    public ForkSpares.Counts spares(CheckpointId id) {
        return spares.counts(id);
    }

    /** Restores the spares that checkpoints want, after a start (those of before a crash were orphans, gone by now). */
    public void restoreSpares() {
        catalog.checkpointSpares().forEach((id, count) -> catalog.findCheckpoint(id).ifPresent(checkpoint ->
                catalog.find(checkpoint.sandboxId()).filter(s -> !(s.state() instanceof SandboxState.Deleted))
                        .ifPresent(sandbox -> spares.want(sparesSource(checkpoint, sandbox), count))));
    }

    private void checkSpares(Sandbox sandbox, boolean memory, int count) {
        if (count < 0 || count > MAX_FORKS) throw StasisException.invalid("spares", "must be between 0 and " + MAX_FORKS + ", was " + count);
        if (!memory) throw StasisException.invalid("spares", "are forks restored ahead from a memory checkpoint; a files checkpoint's forks "
                + "already start from the warm pool (memory: true, or no spares)");
        if (count > spares.hostMax()) throw StasisException.invalid("spares", "this service keeps at most " + spares.hostMax()
                + " fork spares in all (--fork-spares-max), " + count + " asked");
        if (!volumes.mountsOf(sandbox.id()).isEmpty() || !buckets.bucketsOf(sandbox.id()).isEmpty())
            throw new StasisException(ErrorCode.INVALID_STATE, "sandbox " + sandbox.id() + " mounts volumes or buckets: its forks mount "
                    + "them afresh and cannot be restored ahead (fork without spares)", Map.of("sandbox", sandbox.id().value()));
    }

    private void wantSpares(Checkpoint checkpoint, Sandbox sandbox, int count) {
        catalog.setCheckpointSpares(checkpoint.id(), count);
        spares.want(sparesSource(checkpoint, sandbox), count);
    }

    /** After forks, once they are made: restoring the spares' replacements meanwhile would compete with them for the cores. */
    private void refillSpares(Checkpoint checkpoint) {
        if (spares.wanted(checkpoint.id()) > 0)
            catalog.find(checkpoint.sandboxId()).ifPresent(sandbox -> spares.refill(sparesSource(checkpoint, sandbox)));
    }

    private ForkSpares.Source sparesSource(Checkpoint checkpoint, Sandbox sandbox) {
        return new ForkSpares.Source(checkpoint.id(), sandbox.id(), sandbox.tenant(), sandbox.resources(), network.policyOf(sandbox.id()),
                checkpoint.runtime());
    }

    /** Where the checkpoint's upload stands; empty if none was asked for. */
    public Optional<CheckpointUpload> upload(CheckpointId id) {
        return durable.state(id);
    }

    /** Waits, at most {@code timeout}, until the checkpoint is in the durable store (see {@link DurableCheckpoints#sync}). */
    public CheckpointUpload sync(CheckpointId id, Duration timeout) {
        var checkpoint = get(id);
        var sandbox = catalog.find(checkpoint.sandboxId()).orElseThrow(() -> notFound(id.value()));
        return durable.sync(checkpoint, sandbox, timeout);
    }

    /** The tenant's durable checkpoints in the blob store, written by any instance (hibernations included), oldest first. */
    public List<CheckpointDescriptor> listStored(TenantId tenant) {
        return durable.stored(tenant);
    }

    /** A tenant's checkpoints (hibernation images excluded), oldest first. */
    public List<Checkpoint> listOfTenant(TenantId tenant) {
        return catalog.checkpointsOfTenant(tenant).stream().filter(c -> c.purpose() != Checkpoint.Purpose.HIBERNATION).toList();
    }

    /**
     * Creates a new sandbox from a checkpoint, in the caller's tenant: one of this instance's (a
     * branch, as a fork), or a durable one written by any instance sharing the blob store, whose
     * root snapshot chain and image are fetched first. The new sandbox has the checkpoint's
     * template, resources, env, metadata, lifecycle and network policy; with memory its
     * processes are restored, otherwise it boots on the checkpoint's files.
     * <p>On failure: nothing of the new sandbox is left; {@code checkpoint_not_found} if there is
     * no such checkpoint for this tenant, here or in the store.
     */
    public Sandbox createFrom(TenantId tenant, CheckpointId id, Optional<String> name) {
        name.ifPresent(SandboxName::validate);
        try (var claim = locks.claimNames(tenant, name.stream().toList(), catalog::findByName)) {
            // A hibernation image is not branched like a checkpoint (as in fork): only its durable copy is restorable.
            var local = catalog.findCheckpoint(id).filter(c -> c.purpose() != Checkpoint.Purpose.HIBERNATION)
                    .filter(c -> roots.hasSnapshot(c.id()) && (!c.memory() || runtime.imageSize(c.id()).isPresent()));
            var owner = local.flatMap(c -> catalog.find(c.sandboxId())).filter(s -> !(s.state() instanceof SandboxState.Deleted));
            if (local.isPresent() && owner.isPresent()) {
                if (!owner.get().tenant().equals(tenant)) throw notFound(id.value());
                parts.requireDiskAllowed(owner.get().resources(), "fromCheckpoint", "the disk of checkpoint " + id + "'s sandbox");
                quotas.requireRuntime(tenant, local.get().runtime(), "restore of checkpoint " + id);
                var taken = local.get().memory() ? spares.take(id, 1) : List.<ForkSpares.Spare>of();
                if (!taken.isEmpty()) {
                    var made = branchFromSpare(owner.get(), local.get(), name, taken.getFirst()); // its quota is held already
                    refillSpares(local.get());
                    return made;
                }
                var demand = SandboxService.demandOfNew(owner.get().resources(), buckets.bucketsOf(owner.get().id()).size());
                return quotas.admit(tenant, demand, () -> branch(owner.get(), local.get(), name, Optional.empty()));
            }
            var descriptor = durable.descriptor(tenant, id);
            parts.requireDiskAllowed(descriptor.resources(), "fromCheckpoint", "the disk of checkpoint " + id + "'s sandbox");
            quotas.requireRuntime(tenant, descriptor.runtime(), "restore of checkpoint " + id);
            var demand = SandboxService.demandOfNew(descriptor.resources(), descriptor.buckets().size());
            return quotas.admit(tenant, demand, () -> restoring.exclusive(id, () -> {
                try (var present = durable.materialize(descriptor)) {
                    return restoreFrom(present.descriptor(), name);
                }
            }));
        }
    }

    /**
     * A sandbox of a pre-booted template: a memory fork of the template's checkpoint, whose holder
     * (the template build's sandbox, stopped) gives the network it is forked from; the rest is the
     * create's own: name, template, resources, env, metadata, lifecycle and network policy.
     * <p>On failure: nothing of the new sandbox is left; {@code template_unavailable} if the
     * checkpoint or its holder is gone.
     */
    public Sandbox createFromTemplate(SandboxSpec spec, CheckpointId checkpointId) {
        var checkpoint = catalog.findCheckpoint(checkpointId).filter(c -> c.memory() && runtime.imageSize(c.id()).isPresent())
                .orElseThrow(() -> templateGone(spec.template(), "its checkpoint " + checkpointId + " is gone"));
        var holder = catalog.find(checkpoint.sandboxId()).filter(s -> !(s.state() instanceof SandboxState.Deleted))
                .orElseThrow(() -> templateGone(spec.template(), "the sandbox holding its checkpoint is gone"));
        parts.requireDiskAllowed(spec.resources(), "resources.diskMb", "");
        spec.network().ifPresent(policy -> network.validate(spec.tenant(), policy));
        quotas.requireRuntime(spec.tenant(), checkpoint.runtime(), "create");
        try (var claim = locks.claimNames(spec.tenant(), spec.name().stream().toList(), catalog::findByName)) {
            return quotas.admit(spec.tenant(), SandboxService.demandOfNew(spec.resources(), spec.buckets().size()), () -> {
                var id = SandboxId.random();
                long start = System.nanoTime();
                var root = roots.createRootFrom(id, checkpoint.id(), spec.resources().diskBytes());
                try {
                    var opening = network.openAhead(id, spec.network().orElse(network.defaultPolicy()), Optional.of(holder.id()));
                    opening.runBeside(() -> restoreFork(new RuntimeSpec(id, root, id.hostname(), spec.resources(), opening.link(), List.of(),
                            checkpoint.runtime()), checkpoint, Optional.empty()));
                    network.record(id);
                    var sandbox = new Sandbox(id, spec.name(), spec.template(), SandboxState.RUNNING, clock.instant(), spec.resources(),
                            spec.env(), spec.metadata(), Optional.empty(), Optional.of(checkpoint.id()), spec.lifecycle(), spec.tenant(),
                            checkpoint.runtime());
                    catalog.insert(sandbox);
                    activity.touch(id);
                    events.lifecycle(id, "none", "running", "api");
                    log.atInfo().addKeyValue("sandbox", id).addKeyValue("template", spec.template()).addKeyValue("checkpoint", checkpoint.id())
                            .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("sandbox created from a pre-booted template");
                    return sandbox;
                } catch (RuntimeException e) {
                    removeChild(id, e);
                    throw e;
                }
            });
        }
    }

    private static StasisException templateGone(String template, String why) {
        return new StasisException(ErrorCode.TEMPLATE_UNAVAILABLE, "template '" + template + "' is pre-booted but " + why
                + "; build it again", Map.of("template", template));
    }

    private Sandbox restoreFrom(CheckpointDescriptor d, Optional<String> name) {
        var id = SandboxId.random();
        long start = System.nanoTime();
        var root = roots.createRootFrom(id, d.checkpoint(), d.resources().diskBytes());
        try {
            var opening = network.openAhead(id, d.network(), Optional.empty());
            opening.runBeside(() -> {
                // Its buckets are mounted here with this instance's secrets of the same names (the keys never travel in the store).
                buckets.record(id, d.buckets());
                var spec = new RuntimeSpec(id, root, id.hostname(), d.resources(), opening.link())
                        .withMounts(buckets.mount(id, d.tenant(), d.buckets())).withRuntime(d.runtime());
                if (d.memory()) runtime.restore(spec, d.checkpoint());
                else runtime.create(spec);
            });
            network.record(id);
            var sandbox = new Sandbox(id, name, d.template(), SandboxState.RUNNING, clock.instant(), d.resources(), d.env(), d.metadata(),
                    Optional.of(d.sandbox()), Optional.of(d.checkpoint()), d.lifecycle(), d.tenant(), d.runtime());
            catalog.insert(sandbox);
            activity.touch(id);
            events.lifecycle(id, "none", "running", "restore");
            log.atInfo().addKeyValue("sandbox", id).addKeyValue("checkpoint", d.checkpoint()).addKeyValue("memory", d.memory())
                    .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("restored from a durable checkpoint");
            return sandbox;
        } catch (RuntimeException e) {
            removeChild(id, e);
            throw e;
        }
    }

    private Checkpoint take(Sandbox sandbox, Optional<String> name, boolean memory, Checkpoint.Purpose purpose) {
        SandboxId id = sandbox.id();
        boolean processes = sandbox.state().hasProcesses();
        if (memory && !processes)
            throw StasisException.invalidState(id.value(), sandbox.state().wireName(), "take a memory checkpoint");
        var checkpoint = CheckpointId.random();
        long start = System.nanoTime();
        boolean thawAfter = sandbox.state() instanceof SandboxState.Running;
        catalog.beginOperation(new Operation(id, Operation.Kind.CHECKPOINT, Optional.of(checkpoint), clock.instant()));
        long bytes = 0;
        try {
            roots.flush(id);
            if (processes) runtime.freeze(id);
            if (memory) buckets.requireNothingOpen(id, "take a memory checkpoint");
            Runnable snapshot = () -> {
                faults.reach("checkpoint.after-freeze");
                roots.snapshotRoot(id, checkpoint);
                faults.reach("checkpoint.after-snapshot");
            };
            // With memory, the runtime snapshots the files where the image's processes stand (it may run them between the freeze and its dump).
            if (memory) bytes = DiskHeadroom.during(roots, sandbox, () -> runtime.checkpoint(id, checkpoint, snapshot));
            else snapshot.run();
            faults.reach("checkpoint.after-dump");
        } catch (RuntimeException e) {
            try {
                runtime.deleteImage(checkpoint);
                roots.deleteSnapshot(checkpoint);
            } catch (RuntimeException cleanup) {
                e.addSuppressed(cleanup);
            }
            catalog.abandonOperation(id);
            throw e;
        } finally {
            if (thawAfter) runtime.thaw(id);
        }
        var made = new Checkpoint(checkpoint, id, name, memory, purpose, bytes, clock.instant(), sandbox.runtime());
        catalog.insertCheckpoint(made);
        faults.reach("checkpoint.after-record");
        catalog.completeOperation(sandbox.nextGeneration());
        events.append("checkpoint", Optional.of(id), Map.of("sandboxId", id.value(), "checkpointId", checkpoint.value(),
                "memory", memory, "sizeBytes", bytes));
        log.atInfo().addKeyValue("sandbox", id).addKeyValue("checkpoint", checkpoint).addKeyValue("memory", memory)
                .addKeyValue("bytes", bytes).addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("checkpoint taken");
        return made;
    }

    /** The sandbox's newest durable checkpoint, if any of its checkpoints has reached the blob store. */
    public Optional<DurableImage> durableImage(SandboxId id) {
        return catalog.durableImage(id);
    }

    public List<Checkpoint> list(SandboxId id) {
        current(id);
        return catalog.checkpointsOf(id).stream().filter(c -> c.purpose() != Checkpoint.Purpose.HIBERNATION).toList();
    }

    public Checkpoint get(CheckpointId id) {
        return catalog.findCheckpoint(id).orElseThrow(() -> notFound(id.value()));
    }

    public static StasisException notFound(String id) {
        return new StasisException(ErrorCode.CHECKPOINT_NOT_FOUND, "no checkpoint with id '" + id + "'", Map.of("checkpoint", id));
    }

    /** Whether this instance has the checkpoint; if not, it may still exist as a durable copy in the blob store. */
    public boolean isLocal(CheckpointId id) {
        return catalog.findCheckpoint(id).isPresent();
    }

    /** The descriptor of a durable copy in the blob store, if it is {@code tenant}'s; {@code checkpoint_not_found} otherwise. */
    public CheckpointDescriptor stored(TenantId tenant, CheckpointId id) {
        return durable.descriptor(tenant, id);
    }

    /** Deletes a durable copy that exists only in the blob store (see {@link DurableCheckpoints#deleteStored}). */
    public void deleteStored(TenantId tenant, CheckpointId id) {
        if (isLocal(id)) {
            delete(id);
            return;
        }
        durable.deleteStored(tenant, id);
    }

    /** Deletes a checkpoint; forks made from it keep their roots. A hibernation image cannot be deleted this way. */
    public void delete(CheckpointId id) {
        var checkpoint = get(id);
        if (checkpoint.purpose() == Checkpoint.Purpose.HIBERNATION)
            throw new StasisException(ErrorCode.INVALID_STATE, "checkpoint " + id + " holds a hibernated sandbox's processes; resume or delete the sandbox instead",
                    Map.of("checkpoint", id.value(), "sandbox", checkpoint.sandboxId().value()));
        durable.settle(id);
        locks.exclusive(checkpoint.sandboxId(), () -> {
            spares.discard(id);
            durable.forget(id);
            catalog.deleteCheckpoint(id);
            runtime.deleteImage(id);
            roots.deleteSnapshot(id);
            return null;
        });
    }

    /**
     * Forks: {@code count} new sandboxes from a checkpoint (any of this sandbox's, or one of the
     * current state taken now). Each gets its own writable root branched from the checkpoint's root
     * snapshot, its own namespaces and, for a memory checkpoint, the restored processes. All or
     * nothing: if one fork fails, the others are removed.
     */
    public List<Sandbox> fork(SandboxId parentId, Optional<CheckpointId> from, int count, Optional<String> name) {
        if (count < 1 || count > MAX_FORKS) throw StasisException.invalid("count", "must be between 1 and " + MAX_FORKS + ", was " + count);
        name.ifPresent(SandboxName::validate);
        activity.touch(parentId);
        var parent = current(parentId);
        parts.requireDiskAllowed(parent.resources(), "id", "the disk of sandbox " + parentId + ", which its forks get");
        quotas.requireRuntime(parent.tenant(), parent.runtime(), "fork of " + parentId);
        var names = names(name, count);
        var given = from.map(id -> forkable(id, parent));
        // Ready spares are taken first and hold their quota until their forks are recorded: only the others are admitted anew.
        var unused = new ConcurrentLinkedDeque<>(given.filter(Checkpoint::memory)
                .map(c -> spares.take(c.id(), count)).orElse(List.of()));
        int fresh = count - unused.size();
        var one = SandboxService.demandOfNew(parent.resources(), buckets.bucketsOf(parent.id()).size());
        var demand = new TenantUsage(fresh * one.runningSandboxes(), fresh * one.memoryMb(), fresh * one.diskMb());
        try (var claim = locks.claimNames(parent.tenant(), names.stream().flatMap(Optional::stream).toList(), catalog::findByName)) {
            return quotas.admit(parent.tenant(), demand, () -> forkAdmitted(parent, given, names, unused));
        } finally {
            for (ForkSpares.Spare spare; (spare = unused.pollFirst()) != null; ) spares.giveBack(given.get().id(), spare);
        }
    }

    /** A checkpoint the parent's caller may fork: not a hibernation image, and of the parent's tenant. */
    private Checkpoint forkable(CheckpointId id, Sandbox parent) {
        var checkpoint = get(id);
        if (checkpoint.purpose() == Checkpoint.Purpose.HIBERNATION || !sameTenant(checkpoint, parent)) throw notFound(id.value());
        return checkpoint;
    }

    private List<Sandbox> forkAdmitted(Sandbox parent, Optional<Checkpoint> given, List<Optional<String>> names,
                                       Deque<ForkSpares.Spare> unused) {
        var parentId = parent.id();
        Checkpoint checkpoint;
        if (given.isPresent()) {
            checkpoint = given.get();
        } else {
            boolean memory = parent.state().hasProcesses() || parent.state() instanceof SandboxState.Hibernated;
            if (memory) lifecycle.withRunning(parentId, "fork", s -> s);
            // The forks mount the bucket afresh: what the parent wrote must be in it, not only in its mount's cache.
            buckets.flush(parentId);
            checkpoint = locks.exclusive(parentId, () -> take(current(parentId), Optional.empty(), memory, Checkpoint.Purpose.FORK));
        }
        var made = branchAll(parent, checkpoint, names, unused);
        refillSpares(checkpoint);
        events.append("fork", Optional.of(parentId), Map.of("sandboxId", parentId.value(), "checkpointId", checkpoint.id().value(),
                "children", made.stream().map(s -> s.id().value()).toList()));
        return made;
    }

    /** Another tenant's checkpoints do not exist for this one. */
    private boolean sameTenant(Checkpoint checkpoint, Sandbox sandbox) {
        return catalog.find(checkpoint.sandboxId()).map(Sandbox::tenant).filter(sandbox.tenant()::equals).isPresent();
    }

    /** Branches one sandbox per name from the checkpoint, in parallel, from the spares in {@code unused} first; all or nothing. */
    private List<Sandbox> branchAll(Sandbox parent, Checkpoint checkpoint, List<Optional<String>> names, Deque<ForkSpares.Spare> unused) {
        var parentId = parent.id();
        int count = names.size();
        long start = System.nanoTime();
        var made = new ArrayList<Sandbox>();
        RuntimeException failure = null;
        int restored = checkpoint.memory() ? count - Math.min(count, unused.size()) : 0;
        var siblings = restored > 1 ? Optional.of(new Siblings(restored)) : Optional.<Siblings>empty();
        try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
            var futures = new ArrayList<Future<Sandbox>>();
            for (int i = 0; i < count; i++) {
                Optional<String> childName = names.get(i);
                var spare = Optional.ofNullable(unused.pollFirst());
                futures.add(executor.submit(() -> spare.isPresent() ? branchFromSpare(parent, checkpoint, childName, spare.get())
                        : branchAmong(parent, checkpoint, childName, siblings)));
            }
            for (var future : futures) {
                try {
                    made.add(future.get());
                } catch (ExecutionException e) {
                    var cause = e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
                    if (failure == null) failure = cause;
                    else failure.addSuppressed(cause);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    if (failure == null) failure = StasisException.runtimeFailed(parentId.value(), "fork", "interrupted", e);
                }
            }
        }
        if (failure != null) {
            for (var child : made) removeChild(child.id(), failure);
            throw failure;
        }
        log.atInfo().addKeyValue("sandbox", parentId).addKeyValue("checkpoint", checkpoint.id()).addKeyValue("count", count)
                .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("forked");
        return made;
    }

    /** One name per fork: the name itself for a single fork, {@code name-1}, {@code name-2}... for several. */
    private static List<Optional<String>> names(Optional<String> name, int count) {
        var out = new ArrayList<Optional<String>>();
        for (int i = 1; i <= count; i++) {
            String suffix = "-" + i;
            Optional<String> childName = count == 1 ? name : name.map(base -> base + suffix);
            childName.ifPresent(SandboxName::validate);
            out.add(childName);
        }
        return out;
    }

    /** {@link #branch}, as one of several memory forks restored together if there are {@code siblings}. */
    private Sandbox branchAmong(Sandbox parent, Checkpoint checkpoint, Optional<String> name, Optional<Siblings> siblings) {
        var sibling = siblings.map(Siblings::join);
        try {
            return branch(parent, checkpoint, name, sibling);
        } finally {
            sibling.ifPresent(Siblings.Sibling::arrive); // one that failed before its restore holds no other back
        }
    }

    private Sandbox branch(Sandbox parent, Checkpoint checkpoint, Optional<String> name, Optional<Siblings.Sibling> sibling) {
        // A fork without processes, which mounts nothing, is a warm sandbox given the checkpoint's root.
        if (!checkpoint.memory() && checkpoint.runtime() == pool.runtime() && runtime.canReroot() && volumes.mountsOf(parent.id()).isEmpty()
                && buckets.bucketsOf(parent.id()).isEmpty()) {
            var warm = pool.takeAny(parent.template());
            if (warm.isPresent()) {
                try {
                    return branchIntoWarm(parent, checkpoint, name, warm.get().id());
                } finally {
                    pool.refill(warm.get().template());
                }
            }
        }
        var id = SandboxId.random();
        var root = roots.createRootFrom(id, checkpoint.id(), parent.resources().diskBytes());
        try {
            var policy = network.policyOf(parent.id());
            var opening = network.openAhead(id, policy, checkpoint.memory() ? Optional.of(parent.id()) : Optional.empty());
            opening.runBeside(() -> {
                // A fork mounts its parent's volumes, as its parent does (see VolumeService: sharing), and its
                // parent's buckets through mounts of its own (a daemon each: the last upload of a key wins).
                var mounts = volumes.mountsOf(parent.id());
                var bucketList = buckets.bucketsOf(parent.id());
                var hostMounts = new ArrayList<>(volumes.hostMounts(mounts));
                buckets.record(id, bucketList);
                hostMounts.addAll(buckets.mount(id, parent.tenant(), bucketList));
                var spec = new RuntimeSpec(id, root, id.hostname(), parent.resources(), opening.link(), hostMounts, checkpoint.runtime());
                if (!mounts.isEmpty()) volumes.setMounts(id, mounts);
                if (checkpoint.memory()) restoreFork(spec, checkpoint, sibling);
                else runtime.create(spec);
            });
            network.record(id);
            faults.reach("fork.after-start");
            return recordChild(parent, checkpoint, name, id);
        } catch (RuntimeException e) {
            removeChild(id, e);
            throw e;
        }
    }

    /** A memory fork's restore, in its turn; one of several is frozen until all are restored (see {@link Siblings}). */
    private void restoreFork(RuntimeSpec spec, Checkpoint checkpoint, Optional<Siblings.Sibling> sibling) {
        var id = spec.id();
        try {
            turns.run(id, () -> {
                runtime.restore(spec, checkpoint.id());
                if (sibling.isPresent()) runtime.freeze(id);
            });
        } finally {
            sibling.ifPresent(Siblings.Sibling::arrive);
        }
        if (sibling.isEmpty()) return;
        sibling.get().awaitOthers(id);
        runtime.thaw(id);
    }

    /**
     * Memory forks of one call restored in turn ({@link RestoreTurns}): each is frozen
     * once restored and all thaw when the last has arrived (restored, or failed). Those restored
     * first would otherwise run their parent's work meanwhile and take the cores from the restores
     * still to come: a fork of 100 took 99 s so on two cores, where all at once took 27 s.
     */
    private static final class Siblings {
        private final CountDownLatch pending;

        Siblings(int count) {
            pending = new CountDownLatch(count);
        }

        Sibling join() {
            return new Sibling();
        }

        final class Sibling {
            private final AtomicBoolean arrived = new AtomicBoolean();

            /** Restored and frozen, or failed: this one holds the others back no longer. Once per fork. */
            void arrive() {
                if (arrived.compareAndSet(false, true)) pending.countDown();
            }

            void awaitOthers(SandboxId id) {
                try {
                    pending.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw StasisException.runtimeFailed(id.value(), "fork", "interrupted while its sibling forks were restored", e);
                }
            }
        }
    }

    /** {@link #branch} into a warm sandbox: no start, only a new root, the parent's limits and policy. */
    private Sandbox branchIntoWarm(Sandbox parent, Checkpoint checkpoint, Optional<String> name, SandboxId id) {
        long start = System.nanoTime();
        try {
            var root = roots.replaceRoot(id, checkpoint.id(), parent.resources().diskBytes());
            long rooted = System.nanoTime();
            runtime.reroot(id, root);
            long rerooted = System.nanoTime();
            faults.reach("fork.after-reroot");
            roots.deleteReplacedRoot(id);
            if (!parent.resources().equals(pool.resources())) runtime.updateResources(id, parent.resources());
            network.adopt(id, network.policyOf(parent.id()));
            faults.reach("fork.after-start");
            var child = recordChild(parent, checkpoint, name, id);
            log.atDebug().addKeyValue("sandbox", id).addKeyValue("rootMs", (rooted - start) / 1e6).addKeyValue("rerootMs", (rerooted - rooted) / 1e6)
                    .addKeyValue("restMs", (System.nanoTime() - rerooted) / 1e6).log("forked into a warm sandbox");
            return child;
        } catch (RuntimeException e) {
            removeChild(id, e);
            throw e;
        }
    }

    /** {@link #branch} from a spare: restored ahead and frozen, it only takes its parent's policy and limits of now and thaws. */
    private Sandbox branchFromSpare(Sandbox parent, Checkpoint checkpoint, Optional<String> name, ForkSpares.Spare spare) {
        var id = spare.id();
        long start = System.nanoTime();
        try {
            network.adopt(id, network.policyOf(parent.id()), Optional.of(parent.id()));
            if (!parent.resources().equals(spare.resources())) runtime.updateResources(id, parent.resources());
            runtime.foreground(id); // restored in the background
            runtime.thaw(id);
            faults.reach("fork.after-start");
            var child = recordChild(parent, checkpoint, name, id);
            log.atDebug().addKeyValue("sandbox", id).addKeyValue("ms", (System.nanoTime() - start) / 1e6).log("forked from a spare");
            return child;
        } catch (RuntimeException e) {
            removeChild(id, e);
            throw e;
        } finally {
            spare.releaseQuota().run(); // the child counts now, or is gone
        }
    }

    private Sandbox recordChild(Sandbox parent, Checkpoint checkpoint, Optional<String> name, SandboxId id) {
        var child = new Sandbox(id, name, parent.template(), SandboxState.RUNNING, clock.instant(), parent.resources(),
                parent.env(), parent.metadata(), Optional.of(parent.id()), Optional.of(checkpoint.id()), parent.lifecycle(),
                parent.tenant(), checkpoint.runtime());
        catalog.insert(child);
        activity.touch(id);
        events.lifecycle(id, "none", "running", "fork");
        return child;
    }

    private void removeChild(SandboxId id, RuntimeException cause) {
        try {
            runtime.destroy(id);
            buckets.discard(id, cause);
            roots.deleteRoot(id);
            network.release(id); // before the row goes (see NetworkService#release)
            catalog.delete(id);
        } catch (RuntimeException e) {
            cause.addSuppressed(e);
        }
    }

    /** Sandboxes forked from this one. */
    public List<Sandbox> forks(SandboxId parent) {
        current(parent);
        return catalog.children(parent).stream().filter(s -> !(s.state() instanceof SandboxState.Deleted)).toList();
    }

    private Sandbox current(SandboxId id) {
        return catalog.find(id).filter(s -> !(s.state() instanceof SandboxState.Deleted))
                .orElseThrow(() -> StasisException.sandboxNotFound(id.value()));
    }
}
