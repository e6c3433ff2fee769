package io.stasis.sdk;

import java.time.Instant;

/**
 * A template sandboxes are created from.
 *
 * @param name        e.g. {@code tiny}, {@code base}
 * @param description what is in it
 * @param status      {@code ready}, {@code building} or {@code failed}
 * @param version     its version, or null before the first build
 * @param builtAt     when the current version was built, or null
 * @param sizeBytes   its size on disk, or null when unknown
 * @param progress    0..1 while building when known, else null
 * @param message     what a build is doing, or why it failed; else null
 */
public record TemplateInfo(String name, String description, String status, String version, Instant builtAt,
                           Long sizeBytes, Double progress, String message) {
    public boolean isReady() {
        return "ready".equals(status);
    }

    public boolean isBuilding() {
        return "building".equals(status);
    }

    public boolean isFailed() {
        return "failed".equals(status);
    }
}
