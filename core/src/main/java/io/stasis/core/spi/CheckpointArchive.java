package io.stasis.core.spi;

import io.stasis.core.blob.ManifestId;
import io.stasis.core.checkpoint.CheckpointDescriptor;
import io.stasis.core.checkpoint.CheckpointId;
import java.io.InputStream;
import java.util.List;
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
     * Begins one checkpoint's upload: its streams, then its descriptor. While it is open, no
     * garbage collection (of this instance or another sharing the store) removes what it stored or
     * kept; another instance's collection in progress makes it wait. Close it when done.
     */
    Upload beginUpload();

    /** One upload, from {@link #beginUpload} to {@link #close}. Not for concurrent use. */
    interface Upload extends AutoCloseable {
        /**
         * Stores a stream.
         * <p>Effects on success: {@link #open} returns its bytes, from any instance.
         * <p>On failure: nothing visible is left (chunks without a manifest are collectable).
         */
        Stored put(InputStream content);

        /**
         * Keeps a stream stored earlier (the parents an incremental stream builds on) from being
         * collected until the upload ends. {@code not_found} if it is gone already.
         */
        void keep(ManifestId id);

        /**
         * Writes a descriptor, atomically, under {@link CheckpointDescriptor#key}. Its streams must
         * be stored or kept by this upload: the descriptor is what makes a checkpoint durable.
         * {@code runtime_failed} if the upload's hold on the store lapsed (nothing written).
         *
         * @return {@code sha256:<hex>} of the bytes written
         */
        String putDescriptor(CheckpointDescriptor descriptor);

        @Override
        void close();
    }

    /** The bytes of a stored stream, verified while read; {@code internal} on a mismatch or missing chunk. */
    InputStream open(ManifestId id);

    /** The descriptor of a durable checkpoint, from any instance; empty if there is none. */
    Optional<CheckpointDescriptor> descriptor(CheckpointId id);

    /**
     * Every readable descriptor in the store, of every instance and tenant; one that cannot be
     * read is skipped (and logged by the implementation).
     */
    List<CheckpointDescriptor> descriptors();

    /** Removes a descriptor (the checkpoint is no longer restorable elsewhere). Idempotent. */
    void deleteDescriptor(CheckpointId id);
}
