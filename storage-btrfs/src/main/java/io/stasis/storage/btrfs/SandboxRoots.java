package io.stasis.storage.btrfs;

import static io.stasis.storage.btrfs.RootStoreErrors.checkpointFailure;
import static io.stasis.storage.btrfs.RootStoreErrors.withCheckpoint;
import static io.stasis.storage.btrfs.RootStoreErrors.withSandbox;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sandboxes' roots of a {@link BtrfsRootStore}: writable snapshots of a template or of a
 * checkpoint in {@code roots/}, each limited and given its {@link Lineage} before anything runs in
 * it; replaced, limited again, listed and deleted.
 */
final class SandboxRoots {
    private static final Logger log = LoggerFactory.getLogger(BtrfsRootStore.class); // the store's logger, as operators know it

    private final BtrfsPool pool;
    private final RootPaths paths;
    private final Subvolumes subvolumes;
    private final SubvolumeTrees trees;
    private final TemplateImages templates;
    private final Lineages lineages;
    private final Optional<InheritedCharges> charges;

    SandboxRoots(BtrfsPool pool, RootPaths paths, Subvolumes subvolumes, SubvolumeTrees trees, TemplateImages templates, Lineages lineages,
                 Optional<InheritedCharges> charges) {
        this.pool = pool;
        this.paths = paths;
        this.subvolumes = subvolumes;
        this.trees = trees;
        this.templates = templates;
        this.lineages = lineages;
        this.charges = charges;
    }

    Path create(SandboxId id, String template, long diskBytes) {
        requirePositive(id, diskBytes, "create root");
        Path target = paths.root(id);
        long start = System.nanoTime();
        try {
            templates.withTemplate(template, source -> {
                if (Files.exists(target, LinkOption.NOFOLLOW_LINKS))
                    throw new StasisException(ErrorCode.RUNTIME_FAILED, "create root failed for sandbox " + id + ": " + target + " already exists",
                            Map.of("sandbox", id.value(), "step", "create root", "path", target.toString()));
                subvolumes.snapshot(source, target, false);
            });
        } catch (StasisException e) {
            if (e.code() != ErrorCode.RUNTIME_FAILED || e.details().containsKey("sandbox")) throw e;
            throw withSandbox(e, id, "create root");
        }
        finishNew(id, target, diskBytes, Optional.empty(), "create root");
        log.atInfo().addKeyValue("sandbox", id).addKeyValue("template", template).addKeyValue("diskBytes", diskBytes)
                .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("root created");
        return target;
    }

    /**
     * The limit of a root just made, and its lineage if it was made from {@code source} (a
     * checkpoint's snapshot; a root made from a template descends from nothing: the template's
     * files are nobody's to inherit), before anything runs in it; on failure the root goes again.
     */
    private void finishNew(SandboxId id, Path root, long diskBytes, Optional<Path> source, String step) {
        try {
            subvolumes.limit(root, diskBytes);
            source.ifPresent(s -> lineages.recordBranch(s, root));
        } catch (StasisException e) {
            var failure = withSandbox(e, id, step);
            try {
                trees.delete(root);
                lineages.delete(root);
            } catch (IOException | RuntimeException cleanup) {
                failure.addSuppressed(cleanup);
            }
            throw failure;
        }
    }

    void limit(SandboxId id, long diskBytes) {
        String step = "limit root";
        requirePositive(id, diskBytes, step);
        Path root = paths.root(id);
        if (!Subvolumes.isSubvolume(root))
            throw new StasisException(ErrorCode.RUNTIME_FAILED, step + " failed for sandbox " + id + ": it has no root (" + root + ")",
                    Map.of("sandbox", id.value(), "step", step, "path", root.toString()));
        try {
            subvolumes.limit(root, diskBytes);
            charges.ifPresent(c -> c.limitChanged(root, diskBytes));
        } catch (StasisException e) {
            throw withSandbox(e, id, step);
        }
        log.atDebug().addKeyValue("sandbox", id).addKeyValue("diskBytes", diskBytes).log("root limit set");
    }

    private static void requirePositive(SandboxId id, long diskBytes, String step) {
        if (diskBytes <= 0)
            throw new StasisException(ErrorCode.RUNTIME_FAILED, step + " failed for sandbox " + id + ": the disk limit must be positive, was "
                    + diskBytes, Map.of("sandbox", id.value(), "step", step));
    }

    Path createFrom(SandboxId id, CheckpointId checkpoint, long diskBytes) {
        String step = "create root from checkpoint";
        requirePositive(id, diskBytes, step);
        Path source = paths.snapshot(checkpoint);
        Path target = paths.root(id);
        if (!Subvolumes.isSubvolume(source))
            throw checkpointFailure(step, id, checkpoint, "checkpoint " + checkpoint + " has no root snapshot (" + source + ")");
        if (Files.exists(target, LinkOption.NOFOLLOW_LINKS))
            throw checkpointFailure(step, id, checkpoint, target + " already exists");
        long start = System.nanoTime();
        try {
            // Writable, unlike its source: a snapshot is read-only only if asked for.
            subvolumes.snapshot(source, target, false);
        } catch (StasisException e) {
            throw withCheckpoint(e, step, id, checkpoint);
        }
        finishNew(id, target, diskBytes, Optional.of(source), step);
        log.atInfo().addKeyValue("sandbox", id).addKeyValue("checkpoint", checkpoint).addKeyValue("diskBytes", diskBytes)
                .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("root created from checkpoint");
        return target;
    }

    /**
     * The old root is renamed aside (its mounts, which refer to it and not to its path, keep
     * working), then the new one is branched at the root's path.
     */
    Path replace(SandboxId id, CheckpointId checkpoint, long diskBytes) {
        String step = "replace root";
        requirePositive(id, diskBytes, step);
        Path root = paths.root(id);
        Path aside = paths.replaced(id);
        if (!Subvolumes.isSubvolume(root)) throw checkpointFailure(step, id, checkpoint, "the sandbox has no root (" + root + ")");
        if (Files.exists(aside, LinkOption.NOFOLLOW_LINKS)) throw checkpointFailure(step, id, checkpoint, aside + " already exists");
        try {
            Files.move(root, aside, StandardCopyOption.ATOMIC_MOVE);
            lineages.move(root, aside);
        } catch (IOException e) {
            throw checkpointFailure(step, id, checkpoint, "moving the old root aside: " + e, e);
        }
        try {
            return createFrom(id, checkpoint, diskBytes);
        } catch (RuntimeException e) {
            try {
                Files.move(aside, root, StandardCopyOption.ATOMIC_MOVE);
                lineages.move(aside, root);
            } catch (IOException back) {
                e.addSuppressed(back);
            }
            throw e;
        }
    }

    void deleteReplaced(SandboxId id) {
        deleteOf(id, paths.replaced(id), "delete replaced root");
    }

    /** Deletes a sandbox's root (or the one put aside) if it is there, and then its lineage; whether it was. */
    private boolean deleteOf(SandboxId id, Path path, String step) {
        try {
            boolean there = Files.exists(path, LinkOption.NOFOLLOW_LINKS);
            if (there) trees.delete(path);
            lineages.delete(path); // also after a delete cut short once the subvolume went
            return there;
        } catch (StasisException e) {
            throw withSandbox(e, id, step);
        } catch (IOException e) {
            throw StasisException.runtimeFailed(id.value(), step, e.toString(), e);
        }
    }

    Optional<Path> root(SandboxId id) {
        Path path = paths.root(id);
        return Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS) ? Optional.of(path) : Optional.empty();
    }

    void delete(SandboxId id) {
        deleteReplaced(id);
        long start = System.nanoTime();
        if (!deleteOf(id, paths.root(id), "delete root")) return;
        log.atInfo().addKeyValue("sandbox", id).addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("root deleted");
    }

    /** The sandboxes with a root here, or with one put aside by a replace. */
    Set<SandboxId> list() {
        var ids = new TreeSet<SandboxId>();
        try (Stream<Path> entries = Files.list(pool.rootsDir())) {
            entries.filter(p -> Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS))
                    .map(p -> RootPaths.sandboxOf(p.getFileName().toString()))
                    .filter(SandboxId::isValid)
                    .forEach(name -> ids.add(new SandboxId(name)));
        } catch (IOException e) {
            throw StasisException.runtimeFailed(null, "list roots", e.toString(), e);
        }
        return ids;
    }
}
