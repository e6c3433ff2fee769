package io.stasis.sdk;

import java.time.Instant;

/**
 * A kept version of a template.
 *
 * @param template  its pinned name ({@code app@3}), what a create can name and what sandboxes record
 * @param sandboxes how many sandboxes were made from it
 */
public record TemplateVersion(String template, String version, Instant builtAt, long sizeBytes, int sandboxes) {
}
