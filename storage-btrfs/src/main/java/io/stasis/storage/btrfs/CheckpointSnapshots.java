package io.stasis.storage.btrfs;

import static io.stasis.storage.btrfs.RootStoreErrors.checkpointFailure;
import static io.stasis.storage.btrfs.RootStoreErrors.withCheckpoint;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The checkpoints' root snapshots of a {@link BtrfsRootStore}: read-only subvolumes in {@code checkpoints/}. */
final class CheckpointSnapshots {
    private static final Logger log = LoggerFactory.getLogger(BtrfsRootStore.class); // the store's logger, as operators know it

    /** Above this much dirty data on the host, a snapshot is preceded by a write-out. */
    static final long FLUSH_THRESHOLD_BYTES = 16L << 20;

    private final BtrfsPool pool;
    private final RootPaths paths;
    private final Subvolumes subvolumes;
    private final SubvolumeTrees trees;
    private final RunningSends sends;
    private final Lineages lineages;

    CheckpointSnapshots(BtrfsPool pool, RootPaths paths, Subvolumes subvolumes, SubvolumeTrees trees, RunningSends sends, Lineages lineages) {
        this.pool = pool;
        this.paths = paths;
        this.subvolumes = subvolumes;
        this.trees = trees;
        this.sends = sends;
        this.lineages = lineages;
    }

    /**
     * Writes the pool's unwritten data out when the host has more than
     * {@value #FLUSH_THRESHOLD_BYTES} bytes of it (a global figure from /proc/meminfo, cheap to
     * read): otherwise the snapshot's own wait for it is short, and a sync would only add a
     * transaction commit.
     */
    void flush(SandboxId id) {
        if (HostMemory.dirtyBytes() <= FLUSH_THRESHOLD_BYTES) return;
        long start = System.nanoTime();
        subvolumes.sync(pool.path());
        log.atDebug().addKeyValue("sandbox", id).addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("flushed before a snapshot");
    }

    void take(SandboxId id, CheckpointId checkpoint) {
        String step = "snapshot root";
        Path source = paths.root(id);
        Path target = paths.snapshot(checkpoint);
        if (!Files.exists(source, LinkOption.NOFOLLOW_LINKS))
            throw checkpointFailure(step, id, checkpoint, "sandbox " + id + " has no root");
        if (!Subvolumes.isSubvolume(source))
            throw checkpointFailure(step, id, checkpoint, "the root of sandbox " + id + " is not a btrfs subvolume (" + source + ")");
        if (Files.exists(target, LinkOption.NOFOLLOW_LINKS))
            throw checkpointFailure(step, id, checkpoint, "checkpoint " + checkpoint + " already has a root snapshot");
        long start = System.nanoTime();
        try {
            subvolumes.snapshot(source, target, true);
        } catch (StasisException e) {
            throw withCheckpoint(e, step, id, checkpoint);
        }
        try {
            // The snapshot descends from its root: what the root wrote stays traceable to the roots branched from it.
            lineages.recordBranch(source, target);
        } catch (StasisException e) {
            var failure = withCheckpoint(e, step, id, checkpoint);
            try {
                trees.delete(target);
            } catch (IOException | RuntimeException cleanup) {
                failure.addSuppressed(cleanup);
            }
            throw failure;
        }
        log.atInfo().addKeyValue("sandbox", id).addKeyValue("checkpoint", checkpoint)
                .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("root snapshot taken");
    }

    boolean has(CheckpointId checkpoint) {
        return Subvolumes.isSubvolume(paths.snapshot(checkpoint));
    }

    /** Deletes the snapshot if it is there, aborting the sends that read it first ({@link RunningSends}). */
    void delete(CheckpointId checkpoint) {
        Path path = paths.snapshot(checkpoint);
        String step = "delete root snapshot";
        boolean there = Files.exists(path, LinkOption.NOFOLLOW_LINKS);
        if (there) sends.abort(checkpoint);
        long start = System.nanoTime();
        try {
            if (there) trees.delete(path);
            lineages.delete(path); // also after a delete cut short once the subvolume went
        } catch (StasisException e) {
            throw withCheckpoint(e, step, null, checkpoint);
        } catch (IOException e) {
            throw checkpointFailure(step, null, checkpoint, e.toString(), e);
        }
        if (there) log.atInfo().addKeyValue("checkpoint", checkpoint).addKeyValue("ms", (System.nanoTime() - start) / 1_000_000)
                .log("root snapshot deleted");
    }

    /** Subvolumes named like a checkpoint; anything else in {@code checkpoints/} was not made here. */
    Set<CheckpointId> list() {
        var ids = new TreeSet<CheckpointId>();
        try (Stream<Path> entries = Files.list(pool.checkpointsDir())) {
            entries.filter(p -> CheckpointId.isValid(p.getFileName().toString()))
                    .filter(Subvolumes::isSubvolume)
                    .forEach(p -> ids.add(new CheckpointId(p.getFileName().toString())));
        } catch (IOException e) {
            throw StasisException.runtimeFailed(null, "list root snapshots", e.toString(), e);
        }
        return ids;
    }
}
