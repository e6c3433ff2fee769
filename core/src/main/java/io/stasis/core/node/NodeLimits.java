package io.stasis.core.node;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.tenant.TenantUsage;
import java.util.LinkedHashMap;

/**
 * What its operator lets a node hold at once, as a tenant quota does for a tenant: sandboxes with
 * processes (running, paused, standby), and the memory limits of those added up. 0 is no limit.
 * Creates are placed on nodes with room, and a node refuses what would take it past a limit.
 */
public record NodeLimits(int runningSandboxes, long memoryMb) {
    public static final NodeLimits NONE = new NodeLimits(0, 0);

    public NodeLimits {
        if (runningSandboxes < 0 || memoryMb < 0) throw new IllegalArgumentException("node limits must not be negative");
    }

    /** Whether {@code demand} fits beside what the node holds. */
    public boolean fits(TenantUsage held, TenantUsage demand) {
        return within(runningSandboxes, held.runningSandboxes(), demand.runningSandboxes()) && within(memoryMb, held.memoryMb(), demand.memoryMb());
    }

    /**
     * Refuses {@code demand} if it would take node {@code node} past a limit.
     *
     * @throws StasisException {@code host_busy} naming the limit, what the node holds and what was asked
     */
    public void check(String node, TenantUsage held, TenantUsage demand) {
        if (!within(runningSandboxes, held.runningSandboxes(), demand.runningSandboxes()))
            throw full(node, "runningSandboxes", runningSandboxes, held.runningSandboxes(), demand.runningSandboxes());
        if (!within(memoryMb, held.memoryMb(), demand.memoryMb())) throw full(node, "memoryMb", memoryMb, held.memoryMb(), demand.memoryMb());
    }

    private static boolean within(long limit, long held, long demand) {
        return limit == 0 || demand <= 0 || held + demand <= limit;
    }

    private static StasisException full(String node, String limit, long max, long held, long demand) {
        var details = new LinkedHashMap<String, Object>();
        details.put("node", node);
        details.put("limit", limit);
        details.put("max", max);
        details.put("used", held);
        details.put("requested", demand);
        return new StasisException(ErrorCode.HOST_BUSY, "node " + node + " is full: its " + limit + " limit is " + max + ", " + held
                + " in use, " + demand + " more asked; try again when a sandbox stops, or on another node", details);
    }
}
