package io.stasis.sdk;

import java.time.Instant;
import java.util.List;

/**
 * The blob store as {@link Blobs#status()} shows it.
 *
 * @param holder     this instance's name in the store's lock objects
 * @param locks      the lock objects of every instance sharing the store
 * @param lastGc     the last collection this instance ran since it started; null for none
 * @param gcInterval how often it collects on its own ({@code "6h"}); null for only on demand
 */
public record BlobStoreStatus(String holder, Usage usage, List<Lock> locks, BlobGcReport lastGc, String gcInterval) {

    /** What the store holds, counted by listing it. */
    public record Usage(long manifests, long chunks, long storedBytes) {
    }

    /**
     * One instance's lock object: {@code shared} while it uploads, {@code exclusive} while it
     * collects; a {@code stale} one belongs to an instance that stopped refreshing it, and blocks nobody.
     */
    public record Lock(String holder, String kind, Instant lastModified, boolean stale) {
    }
}
