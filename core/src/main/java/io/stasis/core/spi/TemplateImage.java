package io.stasis.core.spi;

import java.time.Instant;

/** An installed template: its recipe's name and version, when it was built, and its size on disk. */
public record TemplateImage(String name, String version, Instant builtAt, long sizeBytes) {
}
