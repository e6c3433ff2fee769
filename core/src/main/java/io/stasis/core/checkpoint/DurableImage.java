package io.stasis.core.checkpoint;

import java.time.Instant;
import java.util.Objects;

/**
 * The newest durable checkpoint of a sandbox: what another host could restore it to.
 *
 * @param checkpoint its id
 * @param digest     {@code sha256:<hex>} of its descriptor as stored ({@code checkpoints/<id>.json} in the
 *                   blob store), which names every stream of it by the SHA-256 of its manifest: whoever
 *                   holds the store can check that what is there is what was written
 * @param takenAt    when the checkpoint was taken (the newest one wins, whatever order uploads end in)
 */
public record DurableImage(CheckpointId checkpoint, String digest, Instant takenAt) {
    public DurableImage {
        Objects.requireNonNull(checkpoint);
        Objects.requireNonNull(takenAt);
        if (!digest.matches("sha256:[0-9a-f]{64}")) throw new IllegalArgumentException("not a sha256 digest: " + digest);
    }
}
