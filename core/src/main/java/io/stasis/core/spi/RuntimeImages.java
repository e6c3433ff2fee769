package io.stasis.core.spi;

import io.stasis.core.checkpoint.CheckpointId;
import java.io.InputStream;
import java.util.OptionalLong;
import java.util.Set;

/** The checkpoint images a runtime holds, and their durable form. */
public interface RuntimeImages {
    /** The size in bytes of the complete image with this id; empty if it is missing or incomplete. */
    OptionalLong imageSize(CheckpointId image);

    /**
     * Serializes a complete image for durable storage, in a format of this runtime's own that
     * {@link #importImage} reads back (here or on another host with the same runtime).
     * <p>Prerequisites: the image is complete.
     * <p>Effects on success: {@code reader} has read the whole stream; returns what it returned.
     * <p>On failure: {@code runtime_failed}; the image is untouched.
     */
    <R> R exportImage(CheckpointId image, StreamReader<R> reader);

    /**
     * Recreates an image from a stream made by {@link #exportImage}.
     * <p>Prerequisites: no image {@code image} exists here.
     * <p>Effects on success: the image is complete and can be restored; returns its size in bytes.
     * <p>On failure: {@code runtime_failed}; no image is left.
     */
    long importImage(CheckpointId image, InputStream stream);

    /** Removes an image. Idempotent. */
    void deleteImage(CheckpointId image);

    /** Every image this runtime holds, complete or not (for reconciliation). */
    Set<CheckpointId> listImages();
}
