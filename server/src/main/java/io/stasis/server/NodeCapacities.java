package io.stasis.server;

import io.stasis.core.node.NodeCapacity;
import io.stasis.core.node.NodeLimits;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.spi.SandboxCatalog;
import io.stasis.host.MemInfo;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** What this host has room for, as a node reports it with its lease. */
final class NodeCapacities {
    private static final long MIB = 1L << 20;

    private NodeCapacities() {
    }

    /** Memory from /proc/meminfo, free space of the filesystem at {@code roots}, and this node's sandboxes with processes. */
    static NodeCapacity of(Path roots, SandboxCatalog catalog, NodeLimits limits) {
        var memory = MemInfo.read();
        long diskFree;
        try {
            diskFree = Files.getFileStore(roots).getUsableSpace();
        } catch (IOException e) {
            diskFree = 0;
        }
        int running = (int) catalog.all().stream().map(Sandbox::state).filter(state -> state.hasProcesses()).count();
        return new NodeCapacity(memory.getOrDefault("MemTotal", 0L) / MIB, memory.getOrDefault("MemAvailable", 0L) / MIB, diskFree / MIB, running, limits);
    }
}
