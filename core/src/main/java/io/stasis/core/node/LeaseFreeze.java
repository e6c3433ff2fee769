package io.stasis.core.node;

import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.spi.Catalog;
import io.stasis.core.spi.SandboxRuntime;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a node cut off from the catalog does with the running sandboxes another node could resume
 * from their durability checkpoints (see {@code DurabilityKeeper}): it freezes them when its lease
 * lapses by its own clock, before any other node may adopt them (that waits a lease more), so
 * that a sandbox never runs on two nodes. When the node renews its lease again, each is thawed if
 * the catalog still places it here (and records it running); one another node took meanwhile is removed here, its stale copy
 * (the other node runs it from its checkpoint).
 *
 * <p>The cgroup freezer needs no catalog, which is out of reach at that moment; which sandboxes to
 * freeze is what the keeper saw on its last pass.
 */
public final class LeaseFreeze implements NodeService.LeaseListener {
    private static final Logger log = LoggerFactory.getLogger(LeaseFreeze.class);

    private final SandboxRuntime runtime;
    private final Catalog catalog;
    private final Supplier<Set<SandboxId>> adoptable;
    private final Set<SandboxId> frozen = ConcurrentHashMap.newKeySet();

    /** @param adoptable the running sandboxes of this node that another node could resume (the keeper's) */
    public LeaseFreeze(SandboxRuntime runtime, Catalog catalog, Supplier<Set<SandboxId>> adoptable) {
        this.runtime = runtime;
        this.catalog = catalog;
        this.adoptable = adoptable;
    }

    /** Freezes them again at every look: a checkpoint under way when the lease lapsed thaws its sandbox when it ends. */
    @Override
    public void leaseLost() {
        for (SandboxId id : adoptable.get()) {
            try {
                runtime.freeze(id);
                if (frozen.add(id))
                    log.atWarn().addKeyValue("sandbox", id).log("froze a sandbox another node may resume while this node is cut off from the catalog");
            } catch (RuntimeException e) {
                log.atWarn().addKeyValue("sandbox", id).setCause(e).log("cannot freeze a sandbox while cut off from the catalog");
            }
        }
    }

    @Override
    public void leaseBack() {
        String self = catalog.localNode();
        for (SandboxId id : Set.copyOf(frozen)) {
            try {
                var holder = catalog.nodeOf(id);
                if (holder.filter(self::equals).isPresent()) {
                    // Paused meanwhile (just before the cut): it stays frozen, as its record says.
                    boolean running = catalog.find(id).map(s -> s.state() instanceof SandboxState.Running).orElse(false);
                    if (running) runtime.thaw(id);
                    log.atInfo().addKeyValue("sandbox", id).addKeyValue("thawed", running)
                            .log("this node's lease is back and the sandbox still its own");
                } else {
                    runtime.destroy(id);
                    log.atInfo().addKeyValue("sandbox", id).addKeyValue("node", holder.orElse("none"))
                            .log("removed this node's stale copy of a sandbox another node took while this one was cut off");
                }
                frozen.remove(id);
            } catch (RuntimeException e) {
                log.atWarn().addKeyValue("sandbox", id).setCause(e).log("cannot settle a sandbox frozen while cut off: it stays frozen until the lease lapses and comes back again, or the service restarts");
            }
        }
    }
}
