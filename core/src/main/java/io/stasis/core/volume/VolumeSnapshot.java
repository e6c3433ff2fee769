package io.stasis.core.volume;

import java.time.Instant;
import java.util.Objects;

/** A read-only point-in-time copy of a volume (a btrfs snapshot), from which new volumes branch. */
public record VolumeSnapshot(VolumeSnapshotId id, VolumeId volume, Instant createdAt) {
    public VolumeSnapshot {
        Objects.requireNonNull(id);
        Objects.requireNonNull(volume);
        Objects.requireNonNull(createdAt);
    }
}
