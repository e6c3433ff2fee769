package io.stasis.storage.btrfs;

import io.stasis.core.concurrent.KeyedLock;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.Ids;
import io.stasis.core.spi.FileOwner;
import io.stasis.core.spi.TemplateImage;
import io.stasis.core.spi.TemplateRecipe;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The templates of a {@link BtrfsRootStore}: {@code templates/<name>} (read-only subvolumes) with
 * their sidecars, built aside and swapped in whole, so that a root is always made from one whole
 * version; builds and swaps a crash interrupted are tidied at open.
 */
final class TemplateImages {
    private static final Logger log = LoggerFactory.getLogger(BtrfsRootStore.class); // the store's logger, as operators know it
    /**
     * A leading {@code _} names a build's cached step, {@code name@N} a kept version: the API's own
     * names have neither.
     */
    private static final Pattern TEMPLATE_NAME = Pattern.compile("[a-z0-9_][a-z0-9._@-]{0,70}");
    private static final String RANDOM = "[0-9a-z]{" + Ids.SUFFIX_LENGTH + "}";
    private static final Pattern BUILD = Pattern.compile("\\.build-(.+)-" + RANDOM);
    private static final Pattern OLD = Pattern.compile("\\.old-(.+)-" + RANDOM);
    private static final String SIDECAR = ".json";

    private final BtrfsPool pool;
    private final Clock clock;
    private final Subvolumes subvolumes;
    private final Btrfs btrfs;
    private final SubvolumeTrees trees;
    /** Readers snapshot templates; the short swap of an install takes it exclusively. */
    private final ReentrantReadWriteLock templateSwap = new ReentrantReadWriteLock();
    private final KeyedLock<String> installs = new KeyedLock<>();

    TemplateImages(BtrfsPool pool, Clock clock, Subvolumes subvolumes, SubvolumeTrees trees) {
        this.pool = pool;
        this.clock = clock;
        this.subvolumes = subvolumes;
        this.btrfs = pool.btrfs();
        this.trees = trees;
    }

    /**
     * Hands the subvolume of template {@code name} to {@code use} while no install can swap it:
     * {@code template_not_found} if there is none.
     */
    void withTemplate(String name, Consumer<Path> use) {
        templateSwap.readLock().lock();
        try {
            Path source = templatePath(name).orElseThrow(() -> StasisException.templateNotFound(name));
            if (!Subvolumes.isSubvolume(source)) throw StasisException.templateNotFound(name);
            use.accept(source);
        } finally {
            templateSwap.readLock().unlock();
        }
    }

    List<TemplateImage> list() {
        var images = new ArrayList<TemplateImage>();
        try (Stream<Path> entries = Files.list(pool.templatesDir())) {
            for (Path subvolume : entries.sorted().toList()) {
                String name = subvolume.getFileName().toString();
                if (!TEMPLATE_NAME.matcher(name).matches() || !Subvolumes.isSubvolume(subvolume)) continue;
                readSidecar(name).ifPresent(images::add);
            }
        } catch (IOException e) {
            throw StasisException.runtimeFailed(null, "list templates", e.toString(), e);
        }
        return images;
    }

    TemplateImage install(TemplateRecipe recipe, FileOwner owner, TemplateRecipe.Progress progress) {
        String name = recipe.name();
        if (name == null || !TEMPLATE_NAME.matcher(name).matches())
            throw StasisException.invalid("template", "'" + name + "' is not a template name (" + TEMPLATE_NAME.pattern() + ")");
        return installs.exclusive(name, () -> build(recipe, owner, progress));
    }

    /** A read-only snapshot of {@code root} installed as {@code image}. */
    TemplateImage installFromRoot(Path root, TemplateImage image) {
        String name = image.name();
        if (!TEMPLATE_NAME.matcher(name).matches())
            throw StasisException.invalid("template", "'" + name + "' is not a template name (" + TEMPLATE_NAME.pattern() + ")");
        return installs.exclusive(name, () -> {
            long start = System.nanoTime();
            Path build = pool.templatesDir().resolve(".build-" + name + "-" + Ids.randomSuffix());
            Path sidecarTemp = pool.templatesDir().resolve(".build-" + name + "-" + Ids.randomSuffix() + SIDECAR);
            try {
                subvolumes.snapshot(root, build, true);
                var installed = image.withSize(TreeOwnership.measure(build).sizeBytes());
                TemplateSidecar.of(installed).writeTo(sidecarTemp);
                Path old = swapIn(name, build, sidecarTemp);
                if (old != null) trees.deleteQuietly(old, "replaced template");
                log.atInfo().addKeyValue("template", name).addKeyValue("version", image.version())
                        .addKeyValue("sizeBytes", installed.sizeBytes())
                        .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("template installed from a root");
                return installed;
            } catch (Throwable failure) {
                cleanUpFailedBuild(build, sidecarTemp, failure);
                if (failure instanceof StasisException e) throw e;
                if (failure instanceof Error e) throw e;
                throw new StasisException(ErrorCode.RUNTIME_FAILED, "install template " + name + " from a root failed: " + failure.getMessage(),
                        Map.of("step", "install template from root", "template", name), failure);
            }
        });
    }

    /** A read-only snapshot of installed template {@code source} installed as {@code image} (the source's size). */
    TemplateImage copy(String source, TemplateImage image) {
        Path path = templatePath(source).filter(Subvolumes::isSubvolume).orElseThrow(() -> StasisException.templateNotFound(source));
        long size = readSidecar(source).map(TemplateImage::sizeBytes).orElse(0L);
        return installFromRoot(path, image).withSize(size);
    }

    /** See {@link BtrfsRootStore#deleteTemplate}. */
    boolean delete(String name) {
        Path path = templatePath(name).orElse(null);
        if (path == null) return false;
        var lock = installs.exclusive(name);
        templateSwap.writeLock().lock();
        try {
            boolean existed = Subvolumes.isSubvolume(path);
            if (existed) subvolumes.delete(path);
            Files.deleteIfExists(sidecarPath(name));
            return existed;
        } catch (IOException e) {
            throw StasisException.runtimeFailed(null, "delete template " + name, e.toString(), e);
        } finally {
            templateSwap.writeLock().unlock();
            lock.close();
        }
    }

    private TemplateImage build(TemplateRecipe recipe, FileOwner owner, TemplateRecipe.Progress progress) {
        String name = recipe.name();
        String step = "build template " + name;
        long start = System.nanoTime();
        Path build = pool.templatesDir().resolve(".build-" + name + "-" + Ids.randomSuffix());
        Path sidecarTemp = pool.templatesDir().resolve(".build-" + name + "-" + Ids.randomSuffix() + SIDECAR);
        subvolumes.create(build);
        try {
            recipe.populate(build, progress);
            unmountLeftovers(build);
            progress.report(0.98, recipe.keepsOwners() ? "measuring the files" : "setting file owners");
            var tree = recipe.keepsOwners() ? TreeOwnership.measure(build) : TreeOwnership.chown(build, owner);
            btrfs.sync(build);
            btrfs.setReadOnly(build, true);
            var image = new TemplateImage(name, recipe.version(), clock.instant(), tree.sizeBytes(), recipe.config());
            TemplateSidecar.of(image).writeTo(sidecarTemp);
            progress.report(0.99, "installing");
            Path old = swapIn(name, build, sidecarTemp);
            if (old != null) trees.deleteQuietly(old, "replaced template");
            log.atInfo().addKeyValue("template", name).addKeyValue("version", image.version())
                    .addKeyValue("files", tree.files()).addKeyValue("sizeBytes", tree.sizeBytes())
                    .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("template installed");
            return image;
        } catch (Throwable failure) {
            cleanUpFailedBuild(build, sidecarTemp, failure);
            if (failure instanceof InterruptedException) Thread.currentThread().interrupt();
            if (failure instanceof StasisException e) throw e;
            if (failure instanceof Error e) throw e;
            throw new StasisException(ErrorCode.RUNTIME_FAILED, step + " failed: " + failure.getMessage(),
                    Map.of("step", step, "template", name, "version", recipe.version()), failure);
        }
    }

    /** Old version aside, new into place, its sidecar over the old one. Returns the old subvolume, if any. */
    private Path swapIn(String name, Path build, Path sidecarTemp) throws IOException {
        Path target = pool.templatesDir().resolve(name);
        templateSwap.writeLock().lock();
        try {
            Path old = null;
            if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
                old = pool.templatesDir().resolve(".old-" + name + "-" + Ids.randomSuffix());
                Files.move(target, old, StandardCopyOption.ATOMIC_MOVE);
            }
            try {
                Files.move(build, target, StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException e) {
                if (old != null) Files.move(old, target, StandardCopyOption.ATOMIC_MOVE); // put the old version back
                throw e;
            }
            TemplateSidecar.publish(sidecarTemp, sidecarPath(name));
            return old;
        } finally {
            templateSwap.writeLock().unlock();
        }
    }

    private void cleanUpFailedBuild(Path build, Path sidecarTemp, Throwable failure) {
        try {
            unmountLeftovers(build);
            if (Subvolumes.isSubvolume(build)) trees.deleteSubvolume(build);
            Files.deleteIfExists(sidecarTemp);
        } catch (Exception e) {
            failure.addSuppressed(e);
        }
        log.atWarn().addKeyValue("build", build).setCause(failure).log("template build failed; partial build removed");
    }

    /**
     * A recipe that mounted something inside its tree and left it would make the subvolume
     * undeletable; a busy leftover is detached lazily rather than failing the build.
     */
    private void unmountLeftovers(Path tree) throws IOException {
        var unmounted = pool.mounts().unmountAllBelow(tree);
        if (!unmounted.isEmpty())
            log.atWarn().addKeyValue("tree", tree).addKeyValue("mounts", unmounted).log("recipe left mounts in its tree; unmounted");
    }

    /**
     * After a crash: builds in progress are garbage; a version set aside goes back into place if
     * its successor never arrived, else it is deleted; temporary sidecars go.
     */
    void recoverInterruptedInstalls() {
        try (Stream<Path> entries = Files.list(pool.templatesDir())) {
            for (Path entry : entries.sorted().toList()) {
                String file = entry.getFileName().toString();
                if (!file.startsWith(".")) continue;
                Matcher old = OLD.matcher(file);
                if (BUILD.matcher(file).matches() && Subvolumes.isSubvolume(entry)) {
                    log.atWarn().addKeyValue("build", entry).log("removing an interrupted template build");
                    trees.deleteQuietly(entry, "interrupted build");
                } else if (old.matches() && Subvolumes.isSubvolume(entry)) {
                    Path current = pool.templatesDir().resolve(old.group(1));
                    if (Files.exists(current, LinkOption.NOFOLLOW_LINKS)) trees.deleteQuietly(entry, "replaced template");
                    else {
                        log.atWarn().addKeyValue("template", old.group(1)).log("restoring a template whose replacement was interrupted");
                        Files.move(entry, current, StandardCopyOption.ATOMIC_MOVE);
                    }
                } else if (file.startsWith(".build-") && file.endsWith(SIDECAR) && Files.isRegularFile(entry, LinkOption.NOFOLLOW_LINKS)) {
                    Files.deleteIfExists(entry);
                }
            }
        } catch (IOException e) {
            throw StasisException.runtimeFailed(null, "recover templates", e.toString(), e);
        }
    }

    private Optional<TemplateImage> readSidecar(String name) {
        Path file = sidecarPath(name);
        try {
            var image = TemplateSidecar.read(file).toImage();
            return Optional.of(new TemplateImage(name, image.version(), image.builtAt(), image.sizeBytes(), image.config()));
        } catch (NoSuchFileException e) {
            log.atWarn().addKeyValue("template", name).log("template has no metadata file; ignored until rebuilt");
            return Optional.empty();
        } catch (IOException | RuntimeException e) {
            log.atWarn().addKeyValue("template", name).setCause(e).log("unreadable template metadata; ignored until rebuilt");
            return Optional.empty();
        }
    }

    private Optional<Path> templatePath(String name) {
        if (name == null || !TEMPLATE_NAME.matcher(name).matches()) return Optional.empty();
        return Optional.of(pool.templatesDir().resolve(name));
    }

    private Path sidecarPath(String name) {
        return pool.templatesDir().resolve(name + SIDECAR);
    }
}
