package io.stasis.templates.oci;

import io.stasis.core.spi.FileOwner;
import io.stasis.core.spi.TemplateRecipe;
import io.stasis.fs.linux.ConfinedRoot;
import io.stasis.fs.linux.LinuxException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies an image's layers, base first, onto an empty root directory by the OCI image spec's
 * rules for layer changesets:
 * <ul>
 *   <li>{@code .wh.NAME} deletes NAME as lower layers left it (never what its own layer wrote);
 *       {@code .wh..wh..opq} empties its directory of lower layers' content;</li>
 *   <li>a member replaces whatever is at its path, except that a directory stays a directory;</li>
 *   <li>regular files get their mode (setuid and setgid kept), symlinks their target as given (never
 *       resolved), hard links link to earlier members inside the root, FIFOs are made;</li>
 *   <li>owners are shifted into the sandbox's user namespace: uid {@code u} becomes
 *       {@code sandboxRoot.uid() + u} (gid likewise); ids above 65535 are refused;</li>
 *   <li>extended attributes by {@link XattrPolicy}: {@code user.*} kept, {@code security.capability}
 *       kept as a namespaced (v3) capability, others skipped with the reason;</li>
 *   <li>modification times are set (directories' once all layers are in);</li>
 *   <li>the root itself becomes the sandbox root's, 0755, unless a {@code ./} member says otherwise.</li>
 * </ul>
 * Refused, naming the layer and the member ({@link ImageException}, reason {@code refused} or
 * {@code too_large}): absolute names and {@code ..} that climbs out, device nodes, files over the
 * per-file limit, more members or bytes than the limits allow, owners out of range.
 *
 * <p>Every change goes through {@link ConfinedRoot}'s tree-building calls, resolved by the kernel
 * confined to the root: a symlink planted by an earlier member or layer ({@code etc -> /}) is
 * followed, if at all, as inside the root, and a member's own path is never followed, so nothing
 * outside the root is ever written, re-owned or deleted. On failure the root is left half-built:
 * the caller discards it (a template build deletes its subvolume).
 */
public final class LayerApplier {
    private static final Logger log = LoggerFactory.getLogger(LayerApplier.class);

    /**
     * @param maxEntries    members in all layers together (whiteouts included)
     * @param maxFileSize   the largest regular file
     * @param maxTotalBytes the sum of all regular files' sizes in all layers
     */
    public record Limits(long maxEntries, long maxFileSize, long maxTotalBytes) {
        /** One million members, 8 GiB per file, 32 GiB in all. */
        public static final Limits DEFAULT = new Limits(1_000_000, 8L << 30, 32L << 30);

        public Limits {
            if (maxEntries <= 0 || maxFileSize < 0 || maxTotalBytes < 0)
                throw new IllegalArgumentException("limits must be positive: " + maxEntries + " entries, " + maxFileSize + " per file, "
                        + maxTotalBytes + " in all");
        }
    }

    /** Something a layer held that was not applied, and why. */
    public record Skipped(String layer, String path, String reason) {
    }

    /**
     * What was applied.
     *
     * @param skipped      the first {@value Application#MAX_SKIPPED_LISTED} things skipped
     * @param skippedCount how many were skipped in all
     */
    public record Report(int layers, long entries, long files, long bytes, List<Skipped> skipped, long skippedCount) {
        public Report {
            skipped = List.copyOf(skipped);
        }
    }

    private final FileOwner sandboxRoot;
    private final Limits limits;

    /**
     * @param sandboxRoot the host uid and gid that root inside a sandbox maps to (its idmap base):
     *                    owner {@code u:g} in a layer lands as {@code sandboxRoot.uid()+u : sandboxRoot.gid()+g}
     */
    public LayerApplier(FileOwner sandboxRoot, Limits limits) {
        this.sandboxRoot = Objects.requireNonNull(sandboxRoot);
        this.limits = Objects.requireNonNull(limits);
        if (sandboxRoot.uid() < 0 || sandboxRoot.gid() < 0) throw new IllegalArgumentException("sandboxRoot must be non-negative: " + sandboxRoot);
    }

    /**
     * Applies {@code layers} in order onto {@code rootDir}, an empty directory (the template's
     * subvolume), which is opened confined here.
     *
     * @throws ImageException what the layers hold that cannot be applied, or a layer that cannot be read
     */
    public Report apply(Path rootDir, List<Layer> layers, TemplateRecipe.Progress progress) {
        long start = System.nanoTime();
        try (ConfinedRoot root = ConfinedRoot.open(rootDir, sandboxRoot)) {
            // the root belongs to the sandbox's root unless the image says otherwise (its "./" member):
            // the store does not re-own this tree, and a root owned by host root shows as nobody inside
            root.setOwner("/", sandboxRoot);
            root.setMode("/", 0755);
            var application = new Application(root, sandboxRoot, limits);
            for (int i = 0; i < layers.size(); i++) {
                Layer layer = layers.get(i);
                progress.report((double) i / Math.max(1, layers.size()),
                        "applying layer " + (i + 1) + "/" + layers.size() + " " + layer.digest().shortHex() + " (" + layer.size() + " bytes)");
                try (InputStream tar = layer.open()) {
                    application.applyLayer(tar, "layer " + layer.digest());
                } catch (java.io.IOException e) {
                    throw ImageException.io("layer " + layer.digest(), "closing it failed: " + e.getMessage(), e);
                }
            }
            application.finish();
            Report report = application.report(layers.size());
            progress.report(1, "applied " + layers.size() + " layers: " + report.files() + " files, " + report.bytes() + " bytes");
            log.atInfo().addKeyValue("root", rootDir).addKeyValue("layers", layers.size()).addKeyValue("entries", report.entries())
                    .addKeyValue("bytes", report.bytes()).addKeyValue("skipped", report.skippedCount())
                    .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("layers applied");
            return report;
        } catch (LinuxException e) { // the root itself: opening it, giving it its owner
            throw ImageException.io("template root " + rootDir, e.getMessage(), e);
        }
    }
}
