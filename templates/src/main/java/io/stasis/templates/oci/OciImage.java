package io.stasis.templates.oci;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * An image ready to be applied: its config, its layers in order (base first), each blob spooled
 * and verified against its digest, however the image came (an OCI layout, a docker-archive, a
 * registry pull). Holds the spool: {@link #close()} deletes it, after which the layers cannot be
 * opened.
 *
 * @param source         where it came from, for people ({@code oci://registry/repo:tag}, {@code upload})
 * @param manifestDigest the manifest's digest, when there was one (a docker-archive has none)
 */
public record OciImage(String source, Optional<Digest> manifestDigest, ImageConfig config, List<Layer> layers, BlobSpool spool)
        implements AutoCloseable {
    public OciImage {
        Objects.requireNonNull(source);
        Objects.requireNonNull(manifestDigest);
        Objects.requireNonNull(config);
        layers = List.copyOf(layers);
        Objects.requireNonNull(spool);
    }

    /** The image's identity: its config's digest. */
    public Digest id() {
        return config.digest();
    }

    /** The sum of the layers' sizes as transported (compressed). */
    public long compressedSize() {
        return layers.stream().mapToLong(Layer::size).sum();
    }

    @Override
    public void close() {
        spool.close();
    }
}
