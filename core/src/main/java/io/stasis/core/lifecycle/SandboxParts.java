package io.stasis.core.lifecycle;

import io.stasis.core.bucket.SandboxBuckets;
import io.stasis.core.error.StasisException;
import io.stasis.core.events.EventLog;
import io.stasis.core.journal.FaultPoints;
import io.stasis.core.network.NetworkService;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.spi.Catalog;
import io.stasis.core.spi.RootStore;
import io.stasis.core.spi.SandboxRuntime;
import io.stasis.core.tenant.QuotaGuard;
import io.stasis.core.volume.SandboxVolumes;
import java.time.Clock;

/**
 * What the sandbox services ({@link SandboxService}, {@link LifecycleService} and the checkpoint
 * service) all work with: the catalog, the roots, the runtime and the network; the locks, events
 * and activity they keep; the tenants' quotas and the sandboxes' volumes and buckets. The server
 * wires it once and hands the same parts to each.
 *
 * @param maxDiskMb the largest disk a sandbox of this host may have ({@code --max-disk-mb}), whatever
 *                  it is made from: a create, a fork, or a checkpoint of another host
 */
public record SandboxParts(Catalog catalog, RootStore roots, SandboxRuntime runtime, SandboxLocks locks, EventLog events,
                           ActivityTracker activity, FaultPoints faults, Clock clock, NetworkService network, QuotaGuard quotas,
                           SandboxVolumes volumes, SandboxBuckets buckets, int maxDiskMb) {

    /**
     * Refuses a new sandbox whose disk is above this host's largest ({@code invalid}, naming
     * {@code field}); {@code from} says where its resources came from, when the caller did not give them.
     */
    public void requireDiskAllowed(Resources resources, String field, String from) {
        if (resources.diskMb() > maxDiskMb)
            throw StasisException.invalid(field, (from.isEmpty() ? "" : from + ": ") + "must be at most " + maxDiskMb
                    + " on this server (--max-disk-mb), was " + resources.diskMb());
    }
}
