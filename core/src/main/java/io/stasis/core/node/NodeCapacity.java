package io.stasis.core.node;

/**
 * What a node has room for, as it last reported: memory and disk of its host, and what runs on it.
 *
 * @param memoryTotalMb     the host's memory
 * @param memoryAvailableMb memory the host could give without swapping ({@code MemAvailable})
 * @param diskFreeMb        free space where the node keeps sandbox roots
 * @param runningSandboxes  sandboxes of the node with processes (running, paused, standby)
 */
public record NodeCapacity(long memoryTotalMb, long memoryAvailableMb, long diskFreeMb, int runningSandboxes) {
    public static final NodeCapacity UNKNOWN = new NodeCapacity(0, 0, 0, 0);
}
