package io.stasis.storage.btrfs;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.Ids;
import io.stasis.core.spi.FileOwner;
import io.stasis.core.spi.VolumeStore;
import io.stasis.core.volume.VolumeId;
import io.stasis.core.volume.VolumeSnapshotId;
import io.stasis.core.volume.VolumeSyncId;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link VolumeStore} on the {@link BtrfsPool} that holds the sandbox roots. Layout:
 * <pre>
 * volumes/&lt;volumeId&gt;               writable subvolume, limited by its level-0 qgroup's max_rfer
 * volume-snapshots/&lt;snapshotId&gt;    read-only snapshots taken through the API
 * volume-syncs/&lt;syncId&gt;            read-only snapshot a sync was sent from (the next sync's parent)
 * volume-receive/.recv-X/          streams being received (removed after, and at start)
 * </pre>
 * The limit is on referenced bytes, like a root's (see {@link BtrfsRootStore}): a volume branched
 * from a snapshot counts what it shares with it, as a disk would.
 */
public final class BtrfsVolumeStore implements VolumeStore {
    private static final Logger log = LoggerFactory.getLogger(BtrfsVolumeStore.class);

    private final Subvolumes subvolumes;
    private final SubvolumeTrees trees;
    private final Btrfs btrfs;
    private final Path volumes;
    private final Path snapshots;
    private final Path syncs;
    private final Path receiving;
    private final Path scratch;

    /**
     * @param scratch a directory outside the pool for stream files
     */
    public BtrfsVolumeStore(BtrfsPool pool, Path scratch) {
        this(pool, scratch, BtrfsIoctl.load().<Subvolumes>map(s -> s).orElse(pool.btrfs()));
    }

    BtrfsVolumeStore(BtrfsPool pool, Path scratch, Subvolumes subvolumes) {
        this.subvolumes = subvolumes;
        this.trees = new SubvolumeTrees(subvolumes);
        this.btrfs = pool.btrfs();
        this.volumes = pool.path().resolve("volumes");
        this.snapshots = pool.path().resolve("volume-snapshots");
        this.syncs = pool.path().resolve("volume-syncs");
        this.receiving = pool.path().resolve("volume-receive");
        this.scratch = scratch;
        try {
            for (Path dir : List.of(volumes, snapshots, syncs, receiving, scratch)) Files.createDirectories(dir);
            // Quotas are what limits a volume; the root store turns them on too (idempotent).
            subvolumes.enableQuotas(pool.path());
            try (Stream<Path> leftovers = Files.list(receiving)) {
                for (Path p : leftovers.toList()) trees.delete(p);
            }
            try (Stream<Path> leftovers = Files.list(scratch)) {
                for (Path p : leftovers.toList()) Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            throw StasisException.runtimeFailed(null, "open volume store", e.toString(), e);
        }
    }

    @Override
    public Path create(VolumeId id, long sizeBytes, FileOwner owner) {
        Path target = volumePath(id);
        requireAbsent(target, "create volume", id.value());
        long start = System.nanoTime();
        subvolumes.create(target);
        try {
            Files.setAttribute(target, "unix:uid", owner.uid(), LinkOption.NOFOLLOW_LINKS);
            Files.setAttribute(target, "unix:gid", owner.gid(), LinkOption.NOFOLLOW_LINKS);
            Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rwxr-xr-x"));
            subvolumes.limit(target, sizeBytes);
        } catch (IOException | RuntimeException e) {
            var failure = e instanceof StasisException se ? withVolume(se, "create volume", id.value())
                    : StasisException.runtimeFailed(null, "create volume " + id, e.toString(), e);
            deleteQuietly(target, failure);
            throw failure;
        }
        log.atInfo().addKeyValue("volume", id).addKeyValue("sizeBytes", sizeBytes).addKeyValue("ms", (System.nanoTime() - start) / 1_000_000)
                .log("volume created");
        return target;
    }

    @Override
    public Path createFrom(VolumeId id, VolumeSnapshotId snapshot, long sizeBytes) {
        Path source = snapshots.resolve(snapshot.value());
        if (!Subvolumes.isSubvolume(source))
            throw failure("branch volume", id.value(), "snapshot " + snapshot + " does not exist on this host");
        return branch(id, source, sizeBytes, "branch volume");
    }

    private Path branch(VolumeId id, Path source, long sizeBytes, String step) {
        Path target = volumePath(id);
        requireAbsent(target, step, id.value());
        subvolumes.snapshot(source, target, false);
        try {
            subvolumes.limit(target, sizeBytes);
        } catch (StasisException e) {
            var failure = withVolume(e, step, id.value());
            deleteQuietly(target, failure);
            throw failure;
        }
        return target;
    }

    @Override
    public Optional<Path> path(VolumeId id) {
        Path p = volumePath(id);
        return Subvolumes.isSubvolume(p) ? Optional.of(p) : Optional.empty();
    }

    @Override
    public void delete(VolumeId id) {
        deleteSubvolume(volumePath(id), "delete volume", id.value());
    }

    @Override
    public Set<VolumeId> list() {
        return idsIn(volumes, VolumeId::isValid, VolumeId::new, "list volumes");
    }

    @Override
    public Set<VolumeSnapshotId> snapshots() {
        return idsIn(snapshots, VolumeSnapshotId::isValid, VolumeSnapshotId::new, "list volume snapshots");
    }

    @Override
    public Set<VolumeSyncId> syncSnapshots() {
        return idsIn(syncs, VolumeSyncId::isValid, VolumeSyncId::new, "list sync snapshots");
    }

    /** The entries of a directory named like ids of one kind; other names are not ours and are left alone. */
    private static <T extends Comparable<T>> Set<T> idsIn(Path dir, Predicate<String> valid,
                                                         Function<String, T> id, String step) {
        var ids = new TreeSet<T>();
        try (Stream<Path> entries = Files.list(dir)) {
            entries.map(p -> p.getFileName().toString()).filter(valid).forEach(n -> ids.add(id.apply(n)));
        } catch (IOException e) {
            throw StasisException.runtimeFailed(null, step, e.toString(), e);
        }
        return ids;
    }

    @Override
    public void snapshot(VolumeId id, VolumeSnapshotId snapshot) {
        readOnlySnapshot(id, snapshots.resolve(snapshot.value()), "snapshot volume");
    }

    private void readOnlySnapshot(VolumeId id, Path target, String step) {
        Path source = volumePath(id);
        if (!Subvolumes.isSubvolume(source)) throw failure(step, id.value(), "volume " + id + " has no subvolume on this host");
        requireAbsent(target, step, id.value());
        long start = System.nanoTime();
        try {
            subvolumes.snapshot(source, target, true);
        } catch (StasisException e) {
            throw withVolume(e, step, id.value());
        }
        log.atInfo().addKeyValue("volume", id).addKeyValue("snapshot", target.getFileName())
                .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("volume snapshot taken");
    }

    @Override
    public void deleteSnapshot(VolumeSnapshotId snapshot) {
        deleteSubvolume(snapshots.resolve(snapshot.value()), "delete volume snapshot", snapshot.value());
    }

    @Override
    public void snapshotForSync(VolumeId id, VolumeSyncId sync) {
        readOnlySnapshot(id, syncs.resolve(sync.value()), "snapshot volume for sync");
    }

    @Override
    public boolean hasSyncSnapshot(VolumeSyncId sync) {
        return Subvolumes.isSubvolume(syncs.resolve(sync.value()));
    }

    @Override
    public void deleteSyncSnapshot(VolumeSyncId sync) {
        deleteSubvolume(syncs.resolve(sync.value()), "delete sync snapshot", sync.value());
    }

    @Override
    public void send(VolumeSyncId sync, Optional<VolumeSyncId> parent, Path streamFile) {
        Path snapshot = syncs.resolve(sync.value());
        var parentPath = parent.map(p -> syncs.resolve(p.value())).filter(Subvolumes::isSubvolume);
        btrfs.send(snapshot, parentPath, stream -> Files.copy(stream, streamFile, StandardCopyOption.REPLACE_EXISTING));
    }

    @Override
    public Path receive(VolumeId id, List<Path> streamFiles, long sizeBytes) {
        if (streamFiles.isEmpty()) throw failure("receive volume", id.value(), "no stream to receive");
        Path staging = receiving.resolve(".recv-" + Ids.randomSuffix());
        try {
            Files.createDirectories(staging);
            long start = System.nanoTime();
            Path last = null;
            for (Path stream : streamFiles) {
                var before = entries(staging);
                try (var in = Files.newInputStream(stream)) {
                    btrfs.receive(staging, in);
                }
                // Each stream holds one subvolume (named as the snapshot it was sent from); the last one received is the content.
                var added = entries(staging);
                added.removeAll(before);
                if (added.size() != 1) throw failure("receive volume", id.value(), "a stream made " + added.size() + " subvolumes, expected 1");
                last = staging.resolve(added.getFirst());
            }
            Path target = branch(id, last, sizeBytes, "receive volume");
            log.atInfo().addKeyValue("volume", id).addKeyValue("streams", streamFiles.size())
                    .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("volume received");
            return target;
        } catch (IOException e) {
            throw StasisException.runtimeFailed(null, "receive volume " + id, e.toString(), e);
        } finally {
            try {
                trees.delete(staging);
            } catch (IOException | RuntimeException e) {
                log.atWarn().addKeyValue("path", staging).setCause(e).log("could not remove a receive staging directory; removed at next start");
            }
        }
    }

    private static List<String> entries(Path dir) throws IOException {
        try (Stream<Path> list = Files.list(dir)) {
            return new ArrayList<>(list.map(p -> p.getFileName().toString()).toList());
        }
    }

    @Override
    public Path scratchDir() {
        return scratch;
    }

    @Override
    public void deleteScratch(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            log.atWarn().addKeyValue("file", file).setCause(e).log("could not delete a stream file");
        }
    }

    private Path volumePath(VolumeId id) {
        return volumes.resolve(id.value()); // validated id: no '/' or '..'
    }

    private void deleteSubvolume(Path path, String step, String subject) {
        if (!Files.exists(path, LinkOption.NOFOLLOW_LINKS)) return;
        long start = System.nanoTime();
        try {
            trees.delete(path);
        } catch (StasisException e) {
            throw withVolume(e, step, subject);
        } catch (IOException e) {
            throw StasisException.runtimeFailed(null, step + " " + subject, e.toString(), e);
        }
        log.atInfo().addKeyValue("subject", subject).addKeyValue("step", step).addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("deleted");
    }

    private void deleteQuietly(Path path, RuntimeException failure) {
        try {
            trees.delete(path);
        } catch (IOException | RuntimeException cleanup) {
            failure.addSuppressed(cleanup);
        }
    }

    private static void requireAbsent(Path target, String step, String subject) {
        if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) throw failure(step, subject, target + " already exists");
    }

    private static StasisException failure(String step, String subject, String problem) {
        return new StasisException(ErrorCode.RUNTIME_FAILED, step + " failed for " + subject + ": " + problem,
                Map.of("step", step, "volume", subject));
    }

    private static StasisException withVolume(StasisException e, String step, String subject) {
        var details = new LinkedHashMap<String, Object>(e.details());
        details.putIfAbsent("step", step);
        details.put("volume", subject);
        return new StasisException(e.code(), step + " failed for " + subject + ": " + e.getMessage(), details, e);
    }

}
