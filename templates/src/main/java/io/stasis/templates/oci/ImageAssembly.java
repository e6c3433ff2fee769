package io.stasis.templates.oci;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * From an index or manifest to an {@link OciImage}, the same for an OCI layout and a registry:
 * an index is followed to the one manifest for the platform, the config and every layer are
 * fetched through {@link Blobs} (which verifies them), and the image is checked to be a
 * container image for the platform with one diff id per layer.
 */
final class ImageAssembly {
    /** Indexes pointing at indexes: docker buildx's OCI export has two levels; more is refused. */
    static final int MAX_INDEX_DEPTH = 4;

    private ImageAssembly() {
    }

    /** Where the documents and blobs of one image come from. Both must verify what they return against the descriptor. */
    interface Blobs {
        /** The bytes of the index or manifest {@code d} names. */
        byte[] manifest(Descriptor d);

        /** The config or layer {@code d} names, spooled. */
        SpooledBlob blob(Descriptor d, String role);
    }

    static OciImage assemble(String source, ImageJson.Document top, Optional<Digest> topDigest, Blobs blobs, Platform platform,
                             BlobSpool spool) {
        ImageJson.Document doc = top;
        Optional<Digest> digest = topDigest;
        String subject = source;
        for (int depth = 0; ; depth++) {
            switch (doc) {
                case ImageJson.Manifest m -> {
                    return image(source, digest, m, blobs, platform, spool);
                }
                case ImageJson.Index index -> {
                    if (depth >= MAX_INDEX_DEPTH) throw ImageException.unsupported(subject, "indexes nested deeper than " + MAX_INDEX_DEPTH);
                    Descriptor chosen = select(index, platform, subject);
                    subject = "manifest " + chosen.digest();
                    doc = ImageJson.document(blobs.manifest(chosen), chosen.mediaType(), subject);
                    digest = Optional.of(chosen.digest());
                }
            }
        }
    }

    /**
     * The entry for {@code platform}; else the only entry that names no platform (an OCI layout
     * of one image, or a nested index). Several unnamed ones are several images: refused.
     */
    static Descriptor select(ImageJson.Index index, Platform platform, String subject) {
        var matching = index.manifests().stream().filter(d -> d.platform().map(platform::accepts).orElse(false)).toList();
        if (!matching.isEmpty()) return matching.getFirst();
        var unnamed = index.manifests().stream().filter(d -> d.platform().isEmpty()).toList();
        if (unnamed.size() == 1) return unnamed.getFirst();
        if (unnamed.size() > 1)
            throw ImageException.unsupported(subject, "holds " + unnamed.size() + " images ("
                    + unnamed.stream().map(Descriptor::describe).collect(Collectors.joining(", ")) + "): import one at a time");
        throw ImageException.unsupported(subject, "has no " + platform + " image; it has "
                + (index.manifests().isEmpty() ? "none" : index.manifests().stream().map(Descriptor::describe).collect(Collectors.joining(", "))));
    }

    private static OciImage image(String source, Optional<Digest> digest, ImageJson.Manifest m, Blobs blobs, Platform platform, BlobSpool spool) {
        String subject = digest.map(d -> "manifest " + d).orElse(source);
        String configType = m.config().mediaType();
        if (!configType.equals(ImageJson.OCI_CONFIG) && !configType.equals(ImageJson.DOCKER_CONFIG))
            throw ImageException.unsupported(subject, "not a container image: its config is " + (configType.isEmpty() ? "untyped" : configType));
        for (Descriptor l : m.layers())
            if (!ImageJson.LAYER_TYPES.contains(l.mediaType()))
                throw ImageException.unsupported(subject, "layer " + l.digest() + " is " + (l.mediaType().isEmpty() ? "untyped" : l.mediaType())
                        + ", not a tar layer");
        SpooledBlob configBlob = blobs.blob(m.config(), "config");
        String configSubject = "config " + m.config().digest();
        ImageConfig config = ImageJson.config(configBlob.readSmall(configSubject, ImageJson.MAX_DOCUMENT_BYTES), m.config().digest(), configSubject);
        var layers = new ArrayList<Layer>();
        for (Descriptor l : m.layers()) layers.add(new Layer(l.digest(), l.mediaType(), l.size(), blobs.blob(l, "layer")));
        return finish(source, digest, config, layers, platform, spool);
    }

    /** Checks what both image kinds share, gives back the disk of blobs no layer needs, and builds the image. */
    static OciImage finish(String source, Optional<Digest> manifestDigest, ImageConfig config, List<Layer> layers, Platform platform,
                           BlobSpool spool) {
        String subject = "config " + config.digest();
        if (config.os().isPresent() && !config.os().get().equals(platform.os())
                || config.architecture().isPresent() && !config.architecture().get().equals(platform.architecture()))
            throw ImageException.unsupported(subject, "the image is for " + config.os().orElse("?") + "/" + config.architecture().orElse("?")
                    + ", sandboxes here run " + platform);
        if (config.diffIds().size() != layers.size())
            throw ImageException.malformed(subject, "names " + config.diffIds().size() + " layer diff ids for " + layers.size() + " layers");
        var keep = new HashSet<Path>();
        for (Layer l : layers) keep.add(l.blob().file());
        spool.retainOnly(keep);
        return new OciImage(source, manifestDigest, config, layers, spool);
    }
}
