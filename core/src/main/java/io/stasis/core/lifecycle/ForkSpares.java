package io.stasis.core.lifecycle;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.concurrent.AheadOfDemand;
import io.stasis.core.error.StasisException;
import io.stasis.core.network.NetworkPolicy;
import io.stasis.core.network.NetworkService;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.RuntimeKind;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.RootStore;
import io.stasis.core.spi.RuntimeSpec;
import io.stasis.core.spi.SandboxRuntime;
import io.stasis.core.tenant.QuotaGuard;
import io.stasis.core.tenant.TenantId;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Memory forks restored ahead of demand. For a memory checkpoint that asks for spares, that many
 * sandboxes are restored from its image in the background and put in standby (frozen, their
 * memory pushed to swap), so that a fork of it only thaws one: a restore costs ~100 ms of CPU,
 * a thaw almost nothing. A spare runs for the few milliseconds between its restore and its
 * freeze, as a fork runs before its caller hears of it.
 *
 * <p>Like warm sandboxes ({@link WarmPool}), spares are not in the catalog until handed out: after
 * a crash the reconciler removes them as orphans, and the service restores them again from the
 * wanted counts the catalog keeps. Each spare holds its tenant's quota (a running sandbox, its
 * memory and disk) until it is handed out or discarded; the host's total is bounded.
 *
 * <p>Spares are restored in the host's {@link RestoreTurns}, which ordinary memory forks share.
 */
public final class ForkSpares implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ForkSpares.class);

    /** What spares of a checkpoint are made from: its image and root, and its sandbox's settings now. */
    public record Source(CheckpointId checkpoint, SandboxId parent, TenantId tenant, Resources resources, NetworkPolicy policy,
                         RuntimeKind runtime) {
    }

    /**
     * A spare: its sandbox, frozen, the resources it was restored with, and the release of the
     * quota it holds. Whoever takes one runs that release once the sandbox is in the catalog (or
     * gone): until then the spare's hold keeps the tenant's count right.
     */
    public record Spare(SandboxId id, Resources resources, Runnable releaseQuota) {
    }

    /** The spares of one checkpoint: how many are wanted, those ready, and the refill that runs (null: none). */
    private static final class Pool {
        volatile int wanted;
        final Deque<Spare> ready = new ArrayDeque<>();
        Thread filling;
    }

    private final RootStore roots;
    private final SandboxRuntime runtime;
    private final NetworkService network;
    private final QuotaGuard quotas;
    private final int hostMax;
    private final Map<CheckpointId, Pool> pools = new ConcurrentHashMap<>();
    private final AtomicInteger held = new AtomicInteger();
    private final Set<Thread> refills = ConcurrentHashMap.newKeySet();
    private final RestoreTurns turns;
    private final UnrecordedSandbox unrecorded;
    private volatile boolean closed;

    /** @param hostMax spares kept on this host in all (0: none) */
    public ForkSpares(RootStore roots, SandboxRuntime runtime, NetworkService network, QuotaGuard quotas, RestoreTurns turns, int hostMax) {
        this.roots = roots;
        this.turns = turns;
        this.runtime = runtime;
        this.network = network;
        this.quotas = quotas;
        this.hostMax = hostMax;
        this.unrecorded = new UnrecordedSandbox(roots, runtime, network);
    }

    /** How many spares this host keeps at most, in all. */
    public int hostMax() {
        return hostMax;
    }

    /** Keeps {@code count} spares of the checkpoint ready (0: none), restoring the missing ones in the background. */
    public void want(Source source, int count) {
        if (count <= 0) {
            discard(source.checkpoint());
            return;
        }
        var pool = pools.computeIfAbsent(source.checkpoint(), c -> new Pool());
        pool.wanted = count;
        List<Spare> extra = new ArrayList<>();
        synchronized (pool) {
            while (pool.ready.size() > count) extra.add(pool.ready.pollLast());
        }
        extra.forEach(this::drop);
        refill(source);
    }

    /**
     * Up to {@code max} ready spares of the checkpoint, frozen, their quota still held (see
     * {@link Spare}); the caller owns them from now on, gives back those it does not use
     * ({@link #giveBack}) and {@link #refill}s once done.
     */
    public List<Spare> take(CheckpointId checkpoint, int max) {
        var pool = pools.get(checkpoint);
        if (pool == null || closed) return List.of();
        var taken = new ArrayList<Spare>();
        synchronized (pool) {
            for (Spare spare; taken.size() < max && (spare = pool.ready.pollFirst()) != null; ) taken.add(spare);
        }
        held.addAndGet(-taken.size());
        return taken;
    }

    /** A spare taken and not used: ready again if its checkpoint still wants it, else ended. */
    public void giveBack(CheckpointId checkpoint, Spare spare) {
        held.incrementAndGet();
        var pool = pools.get(checkpoint);
        if (pool != null && !closed) {
            synchronized (pool) {
                if (pools.get(checkpoint) == pool && pool.ready.size() < pool.wanted) {
                    pool.ready.addFirst(spare);
                    return;
                }
            }
        }
        drop(spare);
    }

    /** Spares of a checkpoint: how many it wants, and how many are ready now. */
    public record Counts(int wanted, int ready) {
    }

    public Counts counts(CheckpointId checkpoint) {
        var pool = pools.get(checkpoint);
        if (pool == null) return new Counts(0, 0);
        synchronized (pool) {
            return new Counts(pool.wanted, pool.ready.size());
        }
    }

    public int wanted(CheckpointId checkpoint) {
        return counts(checkpoint).wanted();
    }

    /**
     * Forgets the checkpoint's spares and ends them, waiting for those being restored: once this
     * returns none is left (the caller deletes the checkpoint's image next, and a delete answered
     * must leave nothing of it running).
     */
    public void discard(CheckpointId checkpoint) {
        var pool = pools.remove(checkpoint);
        if (pool == null) return;
        List<Spare> all;
        Thread filling;
        synchronized (pool) {
            pool.wanted = 0;
            all = new ArrayList<>(pool.ready);
            pool.ready.clear();
            filling = pool.filling;
        }
        all.forEach(this::drop);
        if (filling != null && filling != Thread.currentThread()) awaitEnd(filling);
    }

    private static void awaitEnd(Thread refill) {
        try {
            refill.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Restores the checkpoint's missing spares, side by side, on a background thread. */
    public void refill(Source source) {
        var pool = pools.get(source.checkpoint());
        if (pool == null || closed) return;
        var refill = Thread.ofVirtual().name("fork-spares-" + source.checkpoint()).unstarted(() -> {
            try {
                fill(source, pool);
            } finally {
                synchronized (pool) {
                    pool.filling = null;
                }
                refills.remove(Thread.currentThread());
            }
        });
        synchronized (pool) {
            if (pool.filling != null || pool.ready.size() >= pool.wanted) return;
            pool.filling = refill;
        }
        refills.add(refill);
        refill.start();
    }

    private void fill(Source source, Pool pool) {
        while (!closed && pools.get(source.checkpoint()) == pool) {
            int missing;
            synchronized (pool) {
                missing = pool.wanted - pool.ready.size();
            }
            if (missing <= 0) return;
            var starts = new ArrayList<Thread>();
            var made = new ConcurrentLinkedQueue<Spare>();
            boolean limited = false;
            for (int i = 0; i < missing; i++) {
                Optional<Runnable> quota = reserve(source);
                if (quota.isEmpty()) {
                    limited = true;
                    break;
                }
                starts.add(Thread.ofVirtual().start(() -> make(source, quota.get()).ifPresent(made::add)));
            }
            for (Thread t : starts) {
                try {
                    t.join();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
            var unwanted = new ArrayList<Spare>();
            synchronized (pool) {
                for (Spare spare : made) {
                    if (!closed && pools.get(source.checkpoint()) == pool && pool.ready.size() < pool.wanted) pool.ready.addLast(spare);
                    else unwanted.add(spare);
                }
            }
            unwanted.forEach(this::drop);
            // A limit, or not one restore that worked: the next fork refills again. Some failed among
            // others that worked (a restore timed out on a busy host): the next round tries them again.
            if (limited || made.isEmpty()) return;
        }
    }

    /** The quota and the host's room for one more spare, if there is both. */
    private Optional<Runnable> reserve(Source source) {
        if (held.incrementAndGet() > hostMax) {
            held.decrementAndGet();
            log.atInfo().addKeyValue("checkpoint", source.checkpoint()).addKeyValue("hostMax", hostMax).log("no room for another fork spare");
            return Optional.empty();
        }
        try {
            // spares are of sandboxes without bucket mounts (CheckpointService refuses them for those)
            return Optional.of(quotas.hold(source.tenant(), SandboxService.demandOfNew(source.resources(), 0)));
        } catch (RuntimeException e) {
            held.decrementAndGet();
            log.atInfo().addKeyValue("checkpoint", source.checkpoint()).log("no quota left for another fork spare: " + e.getMessage());
            return Optional.empty();
        }
    }

    /** A spare, restored in its turn; none if its checkpoint went meanwhile or the restore failed (its reservation given back). */
    private Optional<Spare> make(Source source, Runnable quota) {
        var id = SandboxId.random();
        try {
            return turns.call(id, () -> {
                if (closed || !pools.containsKey(source.checkpoint())) return unreserved(quota);
                return AheadOfDemand.call(() -> restore(id, source, quota));
            });
        } catch (StasisException e) { // interrupted while waiting: restore never called
            log.atDebug().addKeyValue("checkpoint", source.checkpoint()).log("a fork spare cut short while waiting for its turn");
            return unreserved(quota);
        }
    }

    /** No spare: its reservation given back. */
    private Optional<Spare> unreserved(Runnable quota) {
        unreserve(quota);
        return Optional.empty();
    }

    private Optional<Spare> restore(SandboxId id, Source source, Runnable quota) {
        long start = System.nanoTime();
        try {
            var root = roots.createRootFrom(id, source.checkpoint(), source.resources().diskBytes());
            var link = network.open(id, source.policy(), Optional.of(source.parent()));
            runtime.restore(new RuntimeSpec(id, root, id.hostname(), source.resources(), link, List.of(), source.runtime()).inBackground(),
                    source.checkpoint());
            runtime.standby(id);
            log.atDebug().addKeyValue("checkpoint", source.checkpoint()).addKeyValue("sandbox", id)
                    .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("fork spare ready");
            return Optional.of(new Spare(id, source.resources(), quota));
        } catch (RuntimeException e) {
            if (pools.containsKey(source.checkpoint()))
                log.atWarn().addKeyValue("checkpoint", source.checkpoint()).setCause(e).log("could not restore a fork spare");
            else log.atDebug().addKeyValue("checkpoint", source.checkpoint()).log("a fork spare cut short: its checkpoint went meanwhile");
            drop(new Spare(id, source.resources(), quota));
            return Optional.empty();
        }
    }

    private void drop(Spare spare) {
        try {
            unrecorded.end(spare.id());
        } catch (RuntimeException e) {
            log.atWarn().addKeyValue("sandbox", spare.id()).setCause(e).log("could not end a fork spare (the reconciler will)");
        } finally {
            unreserve(spare.releaseQuota());
        }
    }

    /** Gives back what {@link #reserve} took for a spare. */
    private void unreserve(Runnable quota) {
        held.decrementAndGet();
        quota.run();
    }

    /** Ends every spare, once refills under way have finished. */
    @Override
    public void close() {
        closed = true;
        List.copyOf(refills).forEach(ForkSpares::awaitEnd);
        for (var checkpoint : List.copyOf(pools.keySet())) discard(checkpoint);
    }
}
