package io.stasis.core.spi;

import java.time.Instant;
import java.util.Objects;

/**
 * An installed template: its recipe's name and version (or its build's), when it was built, its
 * size on disk, and what a build recorded about it ({@link TemplateConfig#NONE} for a recipe's).
 */
public record TemplateImage(String name, String version, Instant builtAt, long sizeBytes, TemplateConfig config) {
    public TemplateImage {
        Objects.requireNonNull(name);
        Objects.requireNonNull(version);
        Objects.requireNonNull(builtAt);
        Objects.requireNonNull(config);
    }

    public TemplateImage(String name, String version, Instant builtAt, long sizeBytes) {
        this(name, version, builtAt, sizeBytes, TemplateConfig.NONE);
    }

    public TemplateImage withSize(long sizeBytes) {
        return new TemplateImage(name, version, builtAt, sizeBytes, config);
    }
}
