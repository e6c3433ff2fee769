package io.stasis.sdk;

import java.time.Instant;

/**
 * What a hibernated sandbox left on disk: the process image it resumes from.
 *
 * @param checkpointId the image's checkpoint, {@code ckpt_...}
 * @param imageBytes   the size of the process image
 * @param takenAt      when the sandbox was hibernated
 */
public record Hibernation(String checkpointId, long imageBytes, Instant takenAt) {
}
