package io.stasis.core.spi;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One page of a {@link BlobStore#list} in ascending key order. {@code nextPageToken} is empty on
 * the last page; otherwise passing it back returns the objects after this page.
 */
public record BlobPage(List<BlobInfo> blobs, Optional<String> nextPageToken) {
    public BlobPage {
        blobs = List.copyOf(blobs);
        Objects.requireNonNull(nextPageToken, "nextPageToken");
    }
}
