package io.stasis.templates.oci;

import io.stasis.core.spi.FileOwner;
import io.stasis.core.spi.TemplateConfig;
import io.stasis.core.spi.TemplateRecipe;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A template imported from a container image ({@link ImageArchive} or {@link RegistryClient}):
 * {@link #populate} applies the image's layers with {@link LayerApplier}, and the image's
 * defaults (Env, WorkingDir, User, Entrypoint and Cmd) are here for the caller to record with the
 * template ({@link #config()}). The version is the image's config digest, so the same image
 * imported again is the same version.
 *
 * <p><b>The store must not flatten this tree's owners.</b> Today {@code TemplateImages} chowns every
 * file a recipe wrote to the sandbox's mapped root ({@code TreeOwnership.chown}). That is right for
 * recipes that write as host root, and wrong here: the layers' owners are already shifted into the
 * sandbox's id range (uid {@code u} lands as {@code sandboxRoot + u}), and a chown would also clear
 * setuid/setgid bits and file capabilities ({@code security.capability}). The store must skip that
 * step for this recipe (a flag on the recipe or the install call, added with the import route), and
 * its {@code sandboxRoot} must be the owner the store uses for sandboxes.
 *
 * <p>The recipe does not own the image: whoever made the {@link OciImage} closes it (deleting its
 * spool) once the template is installed or the build failed.
 */
public final class OciImageRecipe implements TemplateRecipe {
    private final String name;
    private final OciImage image;
    private final LayerApplier applier;
    private volatile LayerApplier.Report report;

    /**
     * @param name        the template's name
     * @param sandboxRoot the host uid/gid root inside a sandbox maps to (the store's owner for sandboxes)
     */
    public OciImageRecipe(String name, OciImage image, FileOwner sandboxRoot, LayerApplier.Limits limits) {
        this.name = Objects.requireNonNull(name);
        this.image = Objects.requireNonNull(image);
        this.applier = new LayerApplier(sandboxRoot, limits);
    }

    @Override
    public String name() {
        return name;
    }

    /** The image's config digest ({@code sha256:...}). */
    @Override
    public String version() {
        return image.id().toString();
    }

    @Override
    public String description() {
        return "imported from " + image.source() + " (" + image.layers().size() + " layers, image " + image.id().shortHex() + ")";
    }

    @Override
    public boolean slow() {
        return true;
    }

    /**
     * Applies the layers onto {@code dir}, an empty directory. On failure (an {@link ImageException})
     * the directory is left half-built for the store to delete.
     */
    @Override
    public void populate(Path dir, Progress progress) {
        report = applier.apply(dir, image.layers(), progress);
    }

    /** What the last {@link #populate} applied and skipped. */
    public Optional<LayerApplier.Report> report() {
        return Optional.ofNullable(report);
    }

    public OciImage image() {
        return image;
    }

    /** The image's {@code Env} as {@code KEY=value} strings, in order. */
    public List<String> env() {
        return image.config().env();
    }

    /** {@link #env()} as a map (a later duplicate wins). */
    public Map<String, String> envMap() {
        return image.config().envMap();
    }

    public Optional<String> workingDir() {
        return image.config().workingDir();
    }

    /** The image's {@code User} as it says it ({@code name}, {@code uid}, {@code uid:gid}); resolving a name needs the template's /etc/passwd. */
    public Optional<String> user() {
        return image.config().user();
    }

    public List<String> entrypoint() {
        return image.config().entrypoint();
    }

    public List<String> cmd() {
        return image.config().cmd();
    }

    /** Entrypoint followed by Cmd: what a container of the image runs. */
    public List<String> command() {
        return image.config().command();
    }

    /** The layers' owners are already the sandbox's (shifted into its id range). */
    @Override
    public boolean keepsOwners() {
        return true;
    }

    /** The defaults as core's template config: env, working directory, user, command, and the source as {@code from}. */
    @Override
    public TemplateConfig config() {
        List<String> command = command();
        return new TemplateConfig(Optional.empty(), Optional.of(image.source()), envMap(), workingDir(), user(),
                command.isEmpty() ? Optional.empty() : Optional.of(command), Optional.empty());
    }
}
