package io.stasis.storage.btrfs;

import static io.stasis.storage.btrfs.RootStoreErrors.checkpointFailure;
import static io.stasis.storage.btrfs.RootStoreErrors.withCheckpoint;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.StasisException;
import io.stasis.core.spi.StreamReader;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Checkpoints' root snapshots as {@code btrfs send} streams, and those streams received back as snapshots. */
final class SnapshotStreams {
    private static final Logger log = LoggerFactory.getLogger(BtrfsRootStore.class); // the store's logger, as operators know it

    /** A send or receive may take a while for a large root: it is bounded, but loosely. */

    private final BtrfsPool pool;
    private final RootPaths paths;
    private final Btrfs btrfs;
    private final CheckpointSnapshots snapshots;
    private final RunningSends sends;

    SnapshotStreams(BtrfsPool pool, RootPaths paths, CheckpointSnapshots snapshots, RunningSends sends) {
        this.pool = pool;
        this.paths = paths;
        this.btrfs = pool.btrfs();
        this.snapshots = snapshots;
        this.sends = sends;
    }

    /** {@code btrfs send}, with {@code -p} for an incremental stream. */
    <R> R send(CheckpointId checkpoint, Optional<CheckpointId> parent, StreamReader<R> reader) {
        String step = "send root snapshot";
        Path source = paths.snapshot(checkpoint);
        if (!Subvolumes.isSubvolume(source)) throw checkpointFailure(step, null, checkpoint, "checkpoint " + checkpoint + " has no root snapshot");
        Optional<Path> parentPath = parent.map(paths::snapshot);
        if (parentPath.isPresent() && !Subvolumes.isSubvolume(parentPath.get()))
            throw checkpointFailure(step, null, checkpoint, "the parent snapshot " + parent.get() + " is gone");
        long start = System.nanoTime();
        try {
            var started = new AtomicReference<Process>();
            R result;
            try {
                result = btrfs.send(source, parentPath, process -> {
                    started.set(process);
                    sends.started(process, checkpoint, parent);
                }, reader);
            } finally {
                var process = started.get();
                if (process != null) sends.ended(process, checkpoint, parent);
            }
            log.atInfo().addKeyValue("checkpoint", checkpoint).addKeyValue("parent", parent.map(CheckpointId::value).orElse("none"))
                    .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("root snapshot sent");
            return result;
        } catch (StasisException e) {
            throw withCheckpoint(e, step, null, checkpoint);
        }
    }

    /**
     * {@code btrfs receive} into {@code checkpoints/}: the stream names the subvolume after the
     * snapshot it was sent from, which must be the checkpoint id. That name is read from the
     * stream's first command before anything is received, and a stream of another snapshot is
     * refused: received, it would make {@code checkpoints/<its name>}, which the cleanup of
     * {@code checkpoints/<checkpoint>} would not remove. (Received aside and renamed into place
     * instead, a read-only subvolume cannot move to another directory: EROFS.)
     */
    void receive(CheckpointId checkpoint, InputStream stream) {
        String step = "receive root snapshot";
        Path target = paths.snapshot(checkpoint);
        if (Files.exists(target, LinkOption.NOFOLLOW_LINKS))
            throw checkpointFailure(step, null, checkpoint, "checkpoint " + checkpoint + " already has a root snapshot");
        var buffered = new BufferedInputStream(stream, SendStreamHeader.PEEK_BYTES);
        requireSnapshotOf(checkpoint, buffered, step);
        long start = System.nanoTime();
        try {
            btrfs.receive(pool.checkpointsDir(), buffered);
            if (!Subvolumes.isSubvolume(target))
                throw checkpointFailure(step, null, checkpoint, "the stream did not hold the snapshot of " + checkpoint);
        } catch (StasisException e) {
            try {
                snapshots.delete(checkpoint);
            } catch (RuntimeException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e.details().containsKey("checkpoint") ? e : withCheckpoint(e, step, null, checkpoint);
        }
        log.atInfo().addKeyValue("checkpoint", checkpoint).addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("root snapshot received");
    }

    /** Refuses, before anything is received, a stream that is not a send stream of {@code checkpoint}'s snapshot. */
    private static void requireSnapshotOf(CheckpointId checkpoint, InputStream stream, String step) {
        Optional<String> name;
        try {
            name = SendStreamHeader.subvolumeName(stream);
        } catch (IOException e) {
            throw checkpointFailure(step, null, checkpoint, "reading the stream: " + e, e);
        }
        if (name.isEmpty())
            throw checkpointFailure(step, null, checkpoint, "the stream does not begin as a btrfs send stream of a snapshot");
        if (!name.get().equals(checkpoint.value()))
            throw checkpointFailure(step, null, checkpoint, "the stream holds the snapshot of " + name.get() + ", not of " + checkpoint);
    }
}
