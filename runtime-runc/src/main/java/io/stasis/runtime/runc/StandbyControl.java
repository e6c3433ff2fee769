package io.stasis.runtime.runc;

import io.stasis.core.sandbox.SandboxId;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Freezes and thaws sandboxes, and puts them in standby: frozen, their memory paged out in the
 * background until a thaw stops that.
 */
final class StandbyControl {
    private static final Logger log = LoggerFactory.getLogger(StandbyControl.class);

    private final Freezer freezer;
    private final MemoryPager pager;
    private final SandboxCgroups cgroups;
    private final SandboxInit init;
    private final InitConnections connections;
    /** Page-outs under way, each with its cancel flag: a thaw stops one before the processes run. */
    private final Map<SandboxId, PageOut> pageOuts = new ConcurrentHashMap<>();

    StandbyControl(Freezer freezer, MemoryPager pager, SandboxCgroups cgroups, SandboxInit init, InitConnections connections) {
        this.freezer = freezer;
        this.pager = pager;
        this.cgroups = cgroups;
        this.init = init;
        this.connections = connections;
    }

    /**
     * Freezes the sandbox once stasis-init holds no connection of the service: a frozen init could
     * not take note of a connection the service closes afterwards, and a checkpoint would find it.
     */
    void freeze(SandboxId id) {
        if (freezer.isFrozen(cgroups.path(id))) return;
        connections.quiesce(id, init.pid(id));
        freezer.freeze(id, cgroups.path(id));
    }

    void thaw(SandboxId id) {
        long start = System.nanoTime();
        stopPageOut(id);
        String cgroup = cgroups.path(id);
        // Back from standby (also one that a restart of the service lost track of): the small mappings
        // are asked for before the processes run, so that what they touch first is on its way in.
        boolean fromStandby = pager.swapped(cgroup) > 0;
        if (fromStandby) Thread.ofVirtual().name("stasis-prefetch-" + id.value()).start(() -> pager.prefetch(cgroup));
        freezer.thaw(id, cgroup);
        if (fromStandby) log.atDebug().addKeyValue("sandbox", id).addKeyValue("us", (System.nanoTime() - start) / 1000).log("thawed from standby");
    }

    void standby(SandboxId id) {
        freeze(id);
        String cgroup = cgroups.path(id);
        var pageOut = new PageOut();
        var previous = pageOuts.put(id, pageOut);
        if (previous != null) previous.cancelAndWait();
        pageOut.thread = Thread.ofVirtual().name("stasis-page-out-" + id.value()).start(() -> {
            long start = System.nanoTime();
            try {
                long released = pager.pageOut(id, cgroup, () -> pageOut.cancelled);
                log.atInfo().addKeyValue("sandbox", id).addKeyValue("releasedBytes", released)
                        .addKeyValue("swappedBytes", pager.swapped(cgroup)).addKeyValue("cancelled", pageOut.cancelled)
                        .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("standby memory paged out");
            } catch (RuntimeException e) {
                log.atWarn().addKeyValue("sandbox", id).setCause(e).log("standby page-out failed; the sandbox stays frozen");
            } finally {
                pageOuts.remove(id, pageOut);
            }
        });
    }

    /** Stops the sandbox's page-out, if one is under way: before it runs, is dumped or goes. */
    void stopPageOut(SandboxId id) {
        var pageOut = pageOuts.remove(id);
        if (pageOut != null) pageOut.cancelAndWait();
    }

    /** A page-out in the background, and how a thaw stops it. */
    private static final class PageOut {
        volatile boolean cancelled;
        volatile Thread thread;

        void cancelAndWait() {
            cancelled = true;
            var t = thread;
            if (t == null) return;
            try {
                t.join(Duration.ofSeconds(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
