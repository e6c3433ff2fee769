package io.stasis.sdk;

import java.time.Instant;
import java.util.List;

/**
 * A volume as the service shows it.
 *
 * @param origin    the snapshot or sync it was made from, or null
 * @param mountedBy the sandboxes that mount it
 */
public record VolumeInfo(String id, String name, long sizeMb, Instant createdAt, String origin, List<Mount> mountedBy) {
    public VolumeInfo {
        mountedBy = mountedBy == null ? List.of() : List.copyOf(mountedBy);
    }

    /** A sandbox mounting the volume. */
    public record Mount(String sandboxId, String path, boolean readOnly) {
    }
}
