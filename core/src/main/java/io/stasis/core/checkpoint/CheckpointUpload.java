package io.stasis.core.checkpoint;

import io.stasis.core.blob.ManifestId;
import java.time.Instant;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * Where a checkpoint's copy in the durable store stands, as the catalog records it.
 *
 * @param parent       the earlier checkpoint of the same sandbox its root stream is incremental to, if any
 * @param root         the root snapshot's stream, once stored
 * @param image        the process image's stream (memory checkpoints), once stored
 * @param logicalBytes bytes of the streams before dedup and compression
 * @param storedBytes  bytes the upload added to the store (after dedup and compression)
 * @param error        why the last attempt failed, while it is not durable
 */
public record CheckpointUpload(CheckpointId checkpoint, State state, Optional<CheckpointId> parent, Optional<ManifestId> root,
                               Optional<ManifestId> image, long logicalBytes, long storedBytes, Optional<String> error,
                               Instant updatedAt) {

    public enum State {
        /** Asked for, not yet in the durable store (queued, running, or cut short by a crash: the reconciler restarts it). */
        PENDING,
        /** Its descriptor is in the durable store: another instance can restore it. */
        DURABLE,
        /** The last attempt failed ({@link #error}); a sync or the next start tries again. */
        FAILED;

        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }

        public static State ofWireName(String name) {
            for (var s : values()) if (s.wireName().equals(name)) return s;
            throw new IllegalArgumentException("unknown upload state '" + name + "'");
        }
    }

    public CheckpointUpload {
        Objects.requireNonNull(checkpoint);
        Objects.requireNonNull(state);
        Objects.requireNonNull(parent);
        Objects.requireNonNull(root);
        Objects.requireNonNull(image);
        Objects.requireNonNull(error);
        Objects.requireNonNull(updatedAt);
    }

    public static CheckpointUpload pending(CheckpointId checkpoint, Instant now) {
        return new CheckpointUpload(checkpoint, State.PENDING, Optional.empty(), Optional.empty(), Optional.empty(), 0, 0, Optional.empty(), now);
    }

    public boolean durable() {
        return state == State.DURABLE;
    }
}
