package io.stasis.templates.oci;

import java.io.InputStream;
import java.util.Objects;

/**
 * One layer of an image, in order from the base: its digest as the manifest names it (for a
 * docker-archive, the digest of its file), its media type and size, and the spooled blob, which
 * was checked against the digest before this record existed.
 */
public record Layer(Digest digest, String mediaType, long size, SpooledBlob blob) {
    public Layer {
        Objects.requireNonNull(digest);
        Objects.requireNonNull(mediaType);
        Objects.requireNonNull(blob);
    }

    /**
     * The layer's tar stream, decompressed (gzip or zstd, told by its first bytes). Corrupt data is
     * an {@link ImageException} naming this layer, raised as it is read. Close it.
     */
    public InputStream open() {
        String subject = "layer " + digest;
        return Compression.decompressed(blob.open(subject), subject);
    }
}
