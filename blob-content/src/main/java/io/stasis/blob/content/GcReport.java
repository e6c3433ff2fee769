package io.stasis.blob.content;

import java.time.Duration;

/**
 * What one {@link ContentStore#gc} did.
 *
 * @param manifestsKept    live manifests, and unreferenced ones younger than the grace period
 * @param manifestsDeleted unreferenced manifests older than the grace period
 * @param liveMissing      ids in the live set with no manifest in the store (logged: a caller's bug
 *                         or lost data, never a reason to delete more)
 * @param chunksKept       chunks a kept manifest refers to
 * @param chunksSpared     unreferenced chunks kept because they are younger than the grace period
 *                         or an upload in flight holds them
 * @param chunksDeleted    unreferenced chunks removed
 * @param bytesFreed       stored (compressed) bytes of the removed chunks and manifests
 * @param took             how long the collection ran
 */
public record GcReport(int manifestsKept, int manifestsDeleted, int liveMissing, long chunksKept, long chunksSpared,
                       long chunksDeleted, long bytesFreed, Duration took) {
}
