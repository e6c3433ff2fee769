package io.stasis.blob.content;

import io.stasis.core.blob.FastCdc;
import java.time.Duration;
import java.util.Objects;

/**
 * How a {@link ContentStore} cuts, compresses, uploads and collects. Values are checked at once,
 * and a bad one is named.
 *
 * @param chunker           where chunks are cut (default {@link FastCdc#DEFAULT}: 32 KiB / 128 KiB /
 *                          512 KiB, chosen by measurement: see there). Stores keep working with any
 *                          chunker, but only equal chunkers deduplicate against each other
 * @param compressionLevel  zstd level, 1 to 19 (default 3: about 300 MB/s a core)
 * @param uploadConcurrency chunks compressed and uploaded at once by one put (default 4); also the
 *                          chunks a reader fetches ahead, and the chunks a GC deletes at once
 * @param retry             retries of backend calls that failed for a passing reason
 * @param gcGrace           what the GC leaves alone however unreferenced: manifests and chunks
 *                          written less than this long ago (default 1 hour). A manifest returned
 *                          by {@code put} outside a session must be in the caller's live set within this time
 * @param locks             how the store-wide locks between processes sharing the backend age
 */
public record ContentStoreConfig(FastCdc chunker, int compressionLevel, int uploadConcurrency, RetryPolicy retry, Duration gcGrace,
                                 LockTiming locks) {
    public static final ContentStoreConfig DEFAULT = new ContentStoreConfig(FastCdc.DEFAULT, 3, 4, RetryPolicy.DEFAULT, Duration.ofHours(1),
            LockTiming.DEFAULT);

    public ContentStoreConfig {
        Objects.requireNonNull(chunker, "chunker");
        if (compressionLevel < 1 || compressionLevel > 19)
            throw new IllegalArgumentException("compressionLevel must be 1 to 19, was " + compressionLevel);
        if (uploadConcurrency < 1 || uploadConcurrency > 64)
            throw new IllegalArgumentException("uploadConcurrency must be 1 to 64, was " + uploadConcurrency);
        Objects.requireNonNull(retry, "retry");
        if (gcGrace == null || gcGrace.isNegative()) throw new IllegalArgumentException("gcGrace must be zero or positive, was " + gcGrace);
        Objects.requireNonNull(locks, "locks");
    }

    public ContentStoreConfig withChunker(FastCdc chunker) {
        return new ContentStoreConfig(chunker, compressionLevel, uploadConcurrency, retry, gcGrace, locks);
    }

    public ContentStoreConfig withCompressionLevel(int level) {
        return new ContentStoreConfig(chunker, level, uploadConcurrency, retry, gcGrace, locks);
    }

    public ContentStoreConfig withUploadConcurrency(int concurrency) {
        return new ContentStoreConfig(chunker, compressionLevel, concurrency, retry, gcGrace, locks);
    }

    public ContentStoreConfig withRetry(RetryPolicy policy) {
        return new ContentStoreConfig(chunker, compressionLevel, uploadConcurrency, policy, gcGrace, locks);
    }

    public ContentStoreConfig withGcGrace(Duration grace) {
        return new ContentStoreConfig(chunker, compressionLevel, uploadConcurrency, retry, grace, locks);
    }

    public ContentStoreConfig withLocks(LockTiming timing) {
        return new ContentStoreConfig(chunker, compressionLevel, uploadConcurrency, retry, gcGrace, timing);
    }
}
