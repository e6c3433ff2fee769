package io.stasis.sdk;

import java.time.Instant;

/**
 * A sandbox's newest durable checkpoint, as {@code GET /v1/sandboxes/{id}} and a resume report it.
 *
 * @param checkpointId the checkpoint that another host could restore the sandbox from
 * @param digest       {@code sha256:<hex>} of its descriptor in the blob store ({@code checkpoints/<id>.json}):
 *                     compare it with the object there to check that what is stored is what was written
 * @param takenAt      when the checkpoint was taken
 */
public record DurableImage(String checkpointId, String digest, Instant takenAt) {
}
