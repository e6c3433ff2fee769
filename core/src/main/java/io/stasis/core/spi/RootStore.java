package io.stasis.core.spi;

import io.stasis.core.sandbox.SandboxId;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Root filesystems: read-only templates, and one writable copy-on-write root per sandbox.
 * Creating a root costs the same whatever the template's size.
 */
public interface RootStore {

    /**
     * Creates the writable root of a sandbox from a template.
     * <p>Prerequisites: the template is installed; no root exists for {@code id}.
     * <p>Effects on success: returns the root's path on the host.
     * <p>On failure: {@code template_not_found} or {@code runtime_failed}; no root is left.
     */
    Path createRoot(SandboxId id, String template);

    /** The root of a sandbox, if it has one. */
    Optional<Path> root(SandboxId id);

    /** Removes a sandbox's root and everything in it. Idempotent. */
    void deleteRoot(SandboxId id);

    /** Every sandbox that has a root here (for reconciliation). */
    Set<SandboxId> listRoots();

    /** The installed templates. */
    List<TemplateImage> templates();

    default Optional<TemplateImage> template(String name) {
        return templates().stream().filter(t -> t.name().equals(name)).findFirst();
    }

    /**
     * Builds a template from a recipe and installs it under its name, replacing an older version.
     * Sandboxes made from the older version keep their roots.
     * <p>Effects on success: the template is read-only and its files belong to {@code owner}.
     * <p>On failure: no partial template is visible; the previous version, if any, stays.
     */
    TemplateImage installTemplate(TemplateRecipe recipe, FileOwner owner, TemplateRecipe.Progress progress);
}
