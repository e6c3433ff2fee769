package io.stasis.templates.oci;

import io.stasis.core.spi.FileOwner;
import io.stasis.core.spi.TemplateRecipe;
import io.stasis.core.template.TemplateBuilds;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * Container images as template imports ({@link TemplateBuilds#startImport}): an uploaded image
 * archive (read and checked at once, from the request's body), or an image pulled from a registry
 * (in the import's own thread). Spools go to a directory of the data dir, never a tmpfs.
 */
public final class OciImports implements AutoCloseable {
    private final FileOwner sandboxRoot;
    private final ImageArchive archives;
    private final RegistryClient registries;

    /**
     * @param sandboxRoot the host ids root inside a sandbox maps to: the layers' owners are shifted from there
     * @param spool       where images wait while they are applied
     * @param limit       the most bytes an image may hold
     */
    public OciImports(FileOwner sandboxRoot, Path spool, long limit, Duration registryTimeout) {
        this.sandboxRoot = sandboxRoot;
        this.archives = new ImageArchive(spool, limit, Platform.LINUX_AMD64);
        this.registries = new RegistryClient(spool, limit, Platform.LINUX_AMD64, registryTimeout);
    }

    /**
     * Reads an uploaded image archive (an OCI image layout or a docker-archive, plain, gzip or zstd)
     * now, checking every blob's digest; {@code invalid_request} (or the like) for a bad one.
     */
    public TemplateBuilds.ImageSource upload(String name, InputStream body) {
        OciImage image;
        try {
            image = archives.read(body, "upload");
        } catch (ImageException e) {
            throw e.toStasisException();
        }
        return new TemplateBuilds.ImageSource() {
            @Override
            public TemplateBuilds.ImportedImage open(io.stasis.core.template.BuildLog log) {
                log.line("# " + image.layers().size() + " layer(s), image " + image.id());
                return imported(name, image);
            }

            @Override
            public void close() {
                image.close();
            }
        };
    }

    /** An image of a registry, {@code oci://REGISTRY/REPO[:TAG][@sha256:...]}; the reference is checked now, the pull runs later. */
    public TemplateBuilds.ImageSource pull(String name, String reference) {
        ImageReference ref;
        try {
            ref = ImageReference.parse(reference);
        } catch (ImageException e) {
            throw e.toStasisException();
        }
        return log -> {
            log.line("# pulling " + reference);
            OciImage image;
            try {
                image = registries.pull(ref, Optional.empty());
            } catch (ImageException e) {
                throw e.toStasisException();
            }
            log.line("# " + image.layers().size() + " layer(s), image " + image.id());
            return imported(name, image);
        };
    }

    private TemplateBuilds.ImportedImage imported(String name, OciImage image) {
        var recipe = new OciImageRecipe(name, image, sandboxRoot, LayerApplier.Limits.DEFAULT);
        return new TemplateBuilds.ImportedImage() {
            @Override
            public TemplateRecipe recipe() {
                return recipe;
            }

            @Override
            public void close() {
                image.close();
            }
        };
    }

    @Override
    public void close() {
        registries.close();
    }
}
