package io.stasis.runtime.runc;

import io.stasis.core.sandbox.SandboxId;
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
    private final PageOuts pageOuts;

    StandbyControl(Freezer freezer, MemoryPager pager, SandboxCgroups cgroups, SandboxInit init, InitConnections connections) {
        this.freezer = freezer;
        this.pager = pager;
        this.pageOuts = new PageOuts(pager);
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
        pageOuts.start(id, cgroups.path(id));
    }

    /** Stops the sandbox's page-out, if one is under way: before it runs, is dumped or goes. */
    void stopPageOut(SandboxId id) {
        pageOuts.stop(id);
    }
}
