package io.stasis.network.linux.proxy;

import io.stasis.core.sandbox.SandboxId;
import java.util.HashMap;
import java.util.Map;

/** How many relayed connections each sandbox has open, held to a limit; a sandbox with none is forgotten. */
final class SandboxConnections {
    private final int limit;
    private final Map<SandboxId, Integer> open = new HashMap<>(); // guarded by this

    SandboxConnections(int limit) {
        this.limit = limit;
    }

    /** Counts one more for {@code sandbox} if it has fewer than the limit open; false (nothing counted) otherwise. */
    synchronized boolean tryOpen(SandboxId sandbox) {
        int now = open.getOrDefault(sandbox, 0);
        if (now >= limit) return false;
        open.put(sandbox, now + 1);
        return true;
    }

    synchronized void closed(SandboxId sandbox) {
        open.computeIfPresent(sandbox, (id, n) -> n <= 1 ? null : n - 1);
    }

}
