package io.stasis.core.volume;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A volume's content as it was at one moment, durable in the blob store.
 *
 * @param streams   the ContentStore manifests to receive in order: a full {@code btrfs send} stream,
 *                  then one incremental stream per later sync; the last one is this sync's own
 * @param parent    the sync the last stream is incremental to, if any
 * @param snapshot  the local read-only snapshot the stream was sent from (kept as the next sync's parent)
 * @param streamBytes the size of this sync's own stream (what this sync had to send)
 */
public record VolumeSync(VolumeSyncId id, VolumeId volume, String volumeName, long sizeMb, List<String> streams,
                         Optional<VolumeSyncId> parent, String snapshot, long streamBytes, Instant createdAt) {
    public VolumeSync {
        Objects.requireNonNull(id);
        Objects.requireNonNull(volume);
        Objects.requireNonNull(volumeName);
        streams = List.copyOf(streams);
        Objects.requireNonNull(parent);
        Objects.requireNonNull(snapshot);
        Objects.requireNonNull(createdAt);
    }
}
