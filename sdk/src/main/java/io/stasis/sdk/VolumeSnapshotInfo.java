package io.stasis.sdk;

import java.time.Instant;

/** A read-only snapshot of a volume; new volumes branch from it. */
public record VolumeSnapshotInfo(String id, String volumeId, Instant createdAt) {
}
