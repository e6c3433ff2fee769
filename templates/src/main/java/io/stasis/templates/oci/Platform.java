package io.stasis.templates.oci;

import java.util.Objects;
import java.util.Optional;

/** The platform an image is for, as an index names it: {@code linux/amd64}, maybe with a variant ({@code v8}). */
public record Platform(String os, String architecture, Optional<String> variant) {
    /** What sandboxes run here. */
    public static final Platform LINUX_AMD64 = new Platform("linux", "amd64", Optional.empty());

    public Platform {
        Objects.requireNonNull(os);
        Objects.requireNonNull(architecture);
        Objects.requireNonNull(variant);
    }

    /** Same os and architecture; a variant is compared only when this platform names one. */
    public boolean accepts(Platform other) {
        return os.equals(other.os) && architecture.equals(other.architecture) && (variant.isEmpty() || variant.equals(other.variant));
    }

    @Override
    public String toString() {
        return os + "/" + architecture + variant.map(v -> "/" + v).orElse("");
    }
}
