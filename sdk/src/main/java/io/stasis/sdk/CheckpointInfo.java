package io.stasis.sdk;

import java.time.Instant;

/**
 * The checkpoint object as the API returns it. {@link Checkpoint} wraps it with methods.
 *
 * @param id        {@code ckpt_...}
 * @param sandboxId the sandbox it was taken of
 * @param name      the caller's name for it, or null
 * @param memory    true when it holds the processes and their memory, false for files only
 * @param purpose   {@code user} (asked for), {@code fork} (taken by a fork of the current state) or
 *                  {@code durability} (taken by the service for the sandbox's {@code checkpointEvery})
 * @param sizeBytes the size of the process image (0 without memory); the root snapshot shares its
 *                  blocks with the sandbox and is not counted
 * @param createdAt when it was taken
 * @param durable   true once it is in the blob store: restorable on any instance sharing it
 * @param upload    {@code none}, {@code pending}, {@code durable} or {@code failed}
 * @param logicalBytes once durable, its streams' bytes before dedup (null before)
 * @param storedBytes  once durable, what its upload added to the blob store after dedup and compression (null before)
 * @param uploadError  why the last upload attempt failed, or null
 * @param spares    forks of it kept restored ahead (null for a copy only in the blob store)
 * @param runtime   the runtime of the sandbox it was taken of, which its forks run in ({@code runc}, {@code gvisor})
 */
public record CheckpointInfo(String id, String sandboxId, String name, boolean memory, String purpose, long sizeBytes,
                             Instant createdAt, boolean durable, String upload, Long logicalBytes, Long storedBytes,
                             String uploadError, Spares spares,
                             @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
                             String runtime) {

    /**
     * @param wanted how many the checkpoint asks for
     * @param ready  how many wait now (a fork takes these first; they are refilled in the background)
     */
    public record Spares(int wanted, int ready) {
    }
}
