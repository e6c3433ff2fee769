package io.stasis.sdk;

import java.time.Instant;

/**
 * What one garbage collection of the blob store did ({@link Blobs#gc()}).
 *
 * @param manifestsKept    streams kept: named by a durable checkpoint or volume sync, younger than the grace period, or being uploaded
 * @param manifestsDeleted streams nothing names any more, removed
 * @param liveMissing      streams a descriptor or record names that the store lacks (the service logs them)
 * @param chunksSpared     unused chunks kept: younger than the grace period, or held by an upload in flight
 * @param bytesFreed       stored (compressed) bytes of what was removed
 */
public record BlobGcReport(int manifestsKept, int manifestsDeleted, int liveMissing, long chunksKept, long chunksSpared,
                           long chunksDeleted, long bytesFreed, long tookMs, Instant finishedAt) {
}
