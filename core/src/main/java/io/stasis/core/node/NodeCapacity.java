package io.stasis.core.node;

/**
 * What a node has room for, as it last reported: memory and disk of its host, what runs on it, and
 * the limits its operator set.
 *
 * @param memoryTotalMb     the host's memory
 * @param memoryAvailableMb memory the host could give without swapping ({@code MemAvailable})
 * @param diskFreeMb        free space where the node keeps sandbox roots
 * @param runningSandboxes  sandboxes of the node with processes (running, paused, standby)
 * @param limits            what the node may hold at once
 */
public record NodeCapacity(long memoryTotalMb, long memoryAvailableMb, long diskFreeMb, int runningSandboxes, NodeLimits limits) {
    public static final NodeCapacity UNKNOWN = new NodeCapacity(0, 0, 0, 0, NodeLimits.NONE);

    /** The memory that sandboxes' limits may add up to on this node: its limit, or else its host's memory. */
    public long memoryForSandboxesMb() {
        return limits.memoryMb() > 0 ? limits.memoryMb() : memoryTotalMb;
    }
}
