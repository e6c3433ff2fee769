package io.stasis.core.template;

import io.stasis.core.spi.TemplateConfig;
import java.time.Instant;
import java.util.Optional;

/**
 * A template as callers see it.
 *
 * @param status   {@code ready}, {@code building}, {@code failed}, or {@code pending} (built on first use)
 * @param progress 0..1 while building
 * @param message  the last progress message, or why the build failed
 * @param config   what a build recorded (a built template's)
 */
public record TemplateStatus(String name, String description, String status, Optional<String> version,
                             Optional<Instant> builtAt, Optional<Long> sizeBytes, Optional<Double> progress,
                             Optional<String> message, Optional<TemplateConfig> config) {

    public TemplateStatus(String name, String description, String status, Optional<String> version, Optional<Instant> builtAt,
                          Optional<Long> sizeBytes, Optional<Double> progress, Optional<String> message) {
        this(name, description, status, version, builtAt, sizeBytes, progress, message, Optional.empty());
    }
}
