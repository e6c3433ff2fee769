package io.stasis.core.spi;

import java.time.Instant;
import java.util.Objects;

/**
 * What a {@link BlobStore} knows of one object. {@code lastModified} is the backend's clock at the
 * last put (S3's server time, the file's mtime): the content store's GC compares it with its grace
 * period, so it must move forward when an object is written again.
 */
public record BlobInfo(String key, long size, Instant lastModified) {
    public BlobInfo {
        BlobStore.checkKey(key);
        if (size < 0) throw new IllegalArgumentException("size of " + key + " is negative: " + size);
        Objects.requireNonNull(lastModified, "lastModified");
    }
}
