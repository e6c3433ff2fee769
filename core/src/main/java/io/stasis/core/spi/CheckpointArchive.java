package io.stasis.core.spi;

import io.stasis.core.blob.ManifestId;
import io.stasis.core.checkpoint.CheckpointDescriptor;
import io.stasis.core.checkpoint.CheckpointId;
import java.io.InputStream;
import java.util.Optional;

/**
 * The durable store as checkpoints use it: content-addressed streams (chunked, deduplicated,
 * verified on read) and one small descriptor per durable checkpoint, shared by every instance
 * that points at the same store.
 */
public interface CheckpointArchive {

    /** One stored stream: its id, its length, and what storing it added to the store after dedup. */
    record Stored(ManifestId id, long logicalBytes, long storedBytes) {
    }

    /**
     * Stores a stream.
     * <p>Effects on success: {@link #open} returns its bytes, from any instance.
     * <p>On failure: nothing visible is left (chunks without a manifest are collectable).
     */
    Stored put(InputStream content);

    /** The bytes of a stored stream, verified while read; {@code internal} on a mismatch or missing chunk. */
    InputStream open(ManifestId id);

    /**
     * Writes a descriptor, atomically, under {@link CheckpointDescriptor#key}. Its streams must be
     * stored already: the descriptor is what makes a checkpoint durable.
     */
    void putDescriptor(CheckpointDescriptor descriptor);

    /** The descriptor of a durable checkpoint, from any instance; empty if there is none. */
    Optional<CheckpointDescriptor> descriptor(CheckpointId id);

    /**
     * Every readable descriptor in the store, of every instance and tenant; one that cannot be
     * read is skipped (and logged by the implementation).
     */
    java.util.List<CheckpointDescriptor> descriptors();

    /** Removes a descriptor (the checkpoint is no longer restorable elsewhere). Idempotent. */
    void deleteDescriptor(CheckpointId id);
}
