package io.stasis.templates.oci;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Reads the JSON documents of images (OCI image spec v1.1, Docker image manifest v2 schema 2):
 * indexes and manifest lists, manifests, configs, a docker-archive's {@code manifest.json}.
 * Every field is type-checked; what is missing or of the wrong type is an {@link ImageException}
 * naming the document. Documents larger than {@value #MAX_DOCUMENT_BYTES} bytes are refused before parsing.
 */
final class ImageJson {
    static final int MAX_DOCUMENT_BYTES = 4 << 20;
    static final String OCI_CONFIG = "application/vnd.oci.image.config.v1+json";
    static final String DOCKER_CONFIG = "application/vnd.docker.container.image.v1+json";
    /** A docker-archive's layers have no media type: this one says what they are. */
    static final String ARCHIVE_LAYER = "application/vnd.docker.image.rootfs.diff.tar";
    static final Set<String> LAYER_TYPES = Set.of(
            "application/vnd.oci.image.layer.v1.tar", "application/vnd.oci.image.layer.v1.tar+gzip",
            "application/vnd.oci.image.layer.v1.tar+zstd", "application/vnd.oci.image.layer.nondistributable.v1.tar",
            "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip", "application/vnd.oci.image.layer.nondistributable.v1.tar+zstd",
            "application/vnd.docker.image.rootfs.diff.tar.gzip", "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip",
            ARCHIVE_LAYER);
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private ImageJson() {
    }

    /** An index (or manifest list), or a manifest. */
    sealed interface Document permits Index, Manifest {
    }

    record Index(List<Descriptor> manifests) implements Document {
    }

    record Manifest(Descriptor config, List<Descriptor> layers) implements Document {
    }

    /** One image of a docker-archive's {@code manifest.json}: member paths, not digests. */
    record ArchiveImage(String config, List<String> layers, List<String> repoTags) {
    }

    /**
     * An index or a manifest, told by its {@code mediaType} (or the {@code contentType} it was
     * served with) and else by its shape.
     */
    static Document document(byte[] bytes, String contentType, String subject) {
        JsonNode root = object(bytes, subject);
        if (root.path("schemaVersion").asInt(2) == 1)
            throw ImageException.unsupported(subject, "Docker image manifest schema 1 is not supported (push the image again with a current tool)");
        String type = text(root, "mediaType", subject).orElse(contentType == null ? "" : contentType.split(";")[0].strip());
        boolean index = type.equals(Descriptor.OCI_INDEX) || type.equals(Descriptor.DOCKER_LIST)
                || type.isEmpty() && root.has("manifests");
        if (index) {
            var manifests = new ArrayList<Descriptor>();
            for (JsonNode m : array(root, "manifests", subject)) manifests.add(descriptor(m, subject, "manifests"));
            return new Index(manifests);
        }
        if (!root.has("config") || !root.has("layers"))
            throw ImageException.malformed(subject, "neither an image index nor an image manifest" + (type.isEmpty() ? "" : " (" + type + ")"));
        var layers = new ArrayList<Descriptor>();
        for (JsonNode l : array(root, "layers", subject)) layers.add(descriptor(l, subject, "layers"));
        return new Manifest(descriptor(root.get("config"), subject, "config"), layers);
    }

    /** The image config: the container defaults and the layers' diff ids. */
    static ImageConfig config(byte[] bytes, Digest digest, String subject) {
        JsonNode root = object(bytes, subject);
        JsonNode c = root.path("config");
        if (!c.isMissingNode() && !c.isNull() && !c.isObject()) throw ImageException.malformed(subject, "config is not an object");
        JsonNode rootfs = root.path("rootfs");
        var diffIds = new ArrayList<Digest>();
        if (rootfs.isObject() && rootfs.has("diff_ids"))
            for (String d : strings(rootfs, "diff_ids", subject)) diffIds.add(Digest.parse(d, subject + " rootfs.diff_ids"));
        return new ImageConfig(digest, text(root, "os", subject).filter(s -> !s.isEmpty()),
                text(root, "architecture", subject).filter(s -> !s.isEmpty()),
                c.isObject() ? strings(c, "Env", subject) : List.of(),
                c.isObject() ? text(c, "WorkingDir", subject).filter(s -> !s.isEmpty()) : Optional.empty(),
                c.isObject() ? text(c, "User", subject).filter(s -> !s.isEmpty()) : Optional.empty(),
                c.isObject() ? strings(c, "Cmd", subject) : List.of(),
                c.isObject() ? strings(c, "Entrypoint", subject) : List.of(),
                diffIds);
    }

    /** A docker-archive's {@code manifest.json}: one entry per image saved. */
    static List<ArchiveImage> archiveManifest(byte[] bytes, String subject) {
        JsonNode root = parse(bytes, subject);
        if (!root.isArray()) throw ImageException.malformed(subject, "not a JSON array");
        var images = new ArrayList<ArchiveImage>();
        for (JsonNode image : root) {
            if (!image.isObject()) throw ImageException.malformed(subject, "an entry is not an object");
            String config = text(image, "Config", subject).orElseThrow(() -> ImageException.malformed(subject, "an entry has no Config"));
            images.add(new ArchiveImage(config, strings(image, "Layers", subject), strings(image, "RepoTags", subject)));
        }
        return images;
    }

    /** The {@code imageLayoutVersion} of an {@code oci-layout} file. */
    static String layoutVersion(byte[] bytes, String subject) {
        return text(object(bytes, subject), "imageLayoutVersion", subject)
                .orElseThrow(() -> ImageException.malformed(subject, "no imageLayoutVersion"));
    }

    // ---

    private static Descriptor descriptor(JsonNode n, String subject, String field) {
        String where = subject + " " + field;
        if (n == null || !n.isObject()) throw ImageException.malformed(where, "a descriptor is not an object");
        String mediaType = text(n, "mediaType", where).orElse("");
        Digest digest = Digest.parse(text(n, "digest", where).orElseThrow(() -> ImageException.malformed(where, "a descriptor has no digest")), where);
        JsonNode size = n.get("size");
        if (size == null || !size.canConvertToLong() || !size.isIntegralNumber() || size.asLong() < 0)
            throw ImageException.malformed(where, "descriptor " + digest + " has no valid size");
        Optional<Platform> platform = Optional.empty();
        JsonNode p = n.get("platform");
        if (p != null && p.isObject()) {
            platform = Optional.of(new Platform(text(p, "os", where).orElse(""), text(p, "architecture", where).orElse(""),
                    text(p, "variant", where)));
        }
        Optional<String> refName = Optional.empty();
        JsonNode annotations = n.get("annotations");
        if (annotations != null && annotations.isObject()) refName = text(annotations, "org.opencontainers.image.ref.name", where);
        return new Descriptor(mediaType, digest, size.asLong(), platform, refName);
    }

    private static JsonNode object(byte[] bytes, String subject) {
        JsonNode root = parse(bytes, subject);
        if (!root.isObject()) throw ImageException.malformed(subject, "not a JSON object");
        return root;
    }

    private static JsonNode parse(byte[] bytes, String subject) {
        if (bytes.length > MAX_DOCUMENT_BYTES)
            throw ImageException.tooLarge(subject, bytes.length + " bytes, over the " + MAX_DOCUMENT_BYTES + " a manifest or config may have");
        try {
            JsonNode root = MAPPER.readTree(bytes);
            if (root == null) throw ImageException.malformed(subject, "empty");
            return root;
        } catch (JacksonException e) {
            throw ImageException.malformed(subject, "not valid JSON: " + e.getOriginalMessage(), e);
        } catch (java.io.IOException e) {
            throw ImageException.malformed(subject, "not valid JSON: " + e.getMessage(), e);
        }
    }

    private static Optional<String> text(JsonNode n, String field, String subject) {
        JsonNode v = n.get(field);
        if (v == null || v.isNull()) return Optional.empty();
        if (!v.isTextual()) throw ImageException.malformed(subject, field + " is not a string");
        return Optional.of(v.asText());
    }

    private static List<String> strings(JsonNode n, String field, String subject) {
        JsonNode v = n.get(field);
        if (v == null || v.isNull()) return List.of();
        if (!v.isArray()) throw ImageException.malformed(subject, field + " is not an array");
        var out = new ArrayList<String>();
        for (JsonNode e : v) {
            if (!e.isTextual()) throw ImageException.malformed(subject, field + " holds something other than strings");
            out.add(e.asText());
        }
        return out;
    }

    private static Iterable<JsonNode> array(JsonNode n, String field, String subject) {
        JsonNode v = n.get(field);
        if (v == null || !v.isArray()) throw ImageException.malformed(subject, field + " is not an array");
        return v;
    }
}
