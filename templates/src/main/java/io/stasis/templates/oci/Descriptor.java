package io.stasis.templates.oci;

import java.util.Optional;

/**
 * A reference to a blob in an index or manifest: its media type, digest and size, and for an
 * index entry the platform it is for and the reference name an OCI layout gives it.
 */
record Descriptor(String mediaType, Digest digest, long size, Optional<Platform> platform, Optional<String> refName) {
    static final String OCI_INDEX = "application/vnd.oci.image.index.v1+json";
    static final String OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";
    static final String DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json";
    static final String DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json";

    boolean isIndex() {
        return mediaType.equals(OCI_INDEX) || mediaType.equals(DOCKER_LIST);
    }

    /** For messages: {@code sha256:abc... (linux/amd64)}. */
    String describe() {
        return digest + platform.map(p -> " (" + p + ")").orElse("") + refName.map(r -> " '" + r + "'").orElse("");
    }
}
