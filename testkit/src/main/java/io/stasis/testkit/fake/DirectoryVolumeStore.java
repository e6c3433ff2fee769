package io.stasis.testkit.fake;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.spi.FileOwner;
import io.stasis.core.spi.VolumeStore;
import io.stasis.core.volume.VolumeId;
import io.stasis.core.volume.VolumeSnapshotId;
import io.stasis.core.volume.VolumeSyncId;
import io.stasis.host.FileTrees;
import io.stasis.testkit.fake.TreeStream.Snapshot;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * A {@link VolumeStore} on plain directories, for tests without root or btrfs; it passes the same
 * contract suite as {@code BtrfsVolumeStore} and fails the same way. Layout under its directory:
 * <pre>
 * volumes/&lt;volumeId&gt;             a volume's tree
 * volume-snapshots/&lt;snapshotId&gt;  a copy of a volume, taken through the API
 * volume-syncs/&lt;syncId&gt;          the copy a sync was sent from (the next sync's parent)
 * work/                          streams being received (emptied at start)
 * scratch/                       stream files ({@link #scratchDir}, emptied at start)
 * </pre>
 * What it does not do as btrfs does: a snapshot is a full copy (its cost grows with the size);
 * snapshots are not read-only; size limits are remembered ({@link #sizeLimit}) but not enforced;
 * the stream files are its own format ({@code TreeStream}), received by this class only, in which
 * an incremental stream names its parent by sync id; only directories, regular files and symlinks
 * are kept. Thread-safe: every change takes one lock.
 */
public final class DirectoryVolumeStore implements VolumeStore {
    private final Path volumes;
    private final Path snapshots;
    private final Path syncs;
    private final Path work;
    private final Path scratch;
    private final ReentrantLock lock = new ReentrantLock();
    private final AtomicLong workNames = new AtomicLong();
    private final Map<VolumeId, Long> limits = new ConcurrentHashMap<>();

    public DirectoryVolumeStore(Path dir) {
        this.volumes = dir.resolve("volumes");
        this.snapshots = dir.resolve("volume-snapshots");
        this.syncs = dir.resolve("volume-syncs");
        this.work = dir.resolve("work");
        this.scratch = dir.resolve("scratch");
        try {
            // What a previous instance left half-done; stream files are temporary, as in BtrfsVolumeStore.
            FileTrees.deleteRecursively(work);
            FileTrees.deleteRecursively(scratch);
            for (Path d : List.of(volumes, snapshots, syncs, work, scratch)) Files.createDirectories(d);
        } catch (IOException e) {
            throw StasisException.runtimeFailed(null, "open volume store", e.toString(), e);
        }
    }

    /** The size limit a volume was made with (not enforced here), if it exists. */
    public OptionalLong sizeLimit(VolumeId id) {
        Long limit = limits.get(id);
        return limit == null ? OptionalLong.empty() : OptionalLong.of(limit);
    }

    @Override
    public Path create(VolumeId id, long sizeBytes, FileOwner owner) {
        String step = "create volume";
        return locked(() -> {
            Path target = volumePath(id);
            requireAbsent(target, step, id.value());
            try {
                Files.createDirectory(target);
                Trees.setOwner(target, owner.uid(), owner.gid());
                Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rwxr-xr-x"));
            } catch (IOException e) {
                var failure = failure(step, id.value(), e.toString(), e);
                deleteQuietly(target, failure);
                throw failure;
            }
            limits.put(id, sizeBytes);
            return target;
        });
    }

    @Override
    public Path createFrom(VolumeId id, VolumeSnapshotId snapshot, long sizeBytes) {
        String step = "branch volume";
        return locked(() -> {
            Path source = snapshots.resolve(snapshot.value());
            if (!isDirectory(source)) throw failure(step, id.value(), "snapshot " + snapshot + " does not exist on this host", null);
            Path target = volumePath(id);
            requireAbsent(target, step, id.value());
            copy(source, target, step, id.value());
            limits.put(id, sizeBytes);
            return target;
        });
    }

    @Override
    public Optional<Path> path(VolumeId id) {
        Path path = volumePath(id);
        return isDirectory(path) ? Optional.of(path) : Optional.empty();
    }

    @Override
    public void delete(VolumeId id) {
        locked(() -> {
            delete(volumePath(id), "delete volume", id.value());
            limits.remove(id);
            return null;
        });
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

    @Override
    public void snapshot(VolumeId id, VolumeSnapshotId snapshot) {
        snapshotTo(id, snapshots.resolve(snapshot.value()), "snapshot volume");
    }

    @Override
    public void deleteSnapshot(VolumeSnapshotId snapshot) {
        locked(() -> delete(snapshots.resolve(snapshot.value()), "delete volume snapshot", snapshot.value()));
    }

    @Override
    public void snapshotForSync(VolumeId id, VolumeSyncId sync) {
        snapshotTo(id, syncs.resolve(sync.value()), "snapshot volume for sync");
    }

    private void snapshotTo(VolumeId id, Path target, String step) {
        locked(() -> {
            Path source = volumePath(id);
            if (!isDirectory(source)) throw failure(step, id.value(), "volume " + id + " does not exist on this host", null);
            requireAbsent(target, step, id.value());
            copy(source, target, step, id.value());
            return null;
        });
    }

    @Override
    public boolean hasSyncSnapshot(VolumeSyncId sync) {
        return isDirectory(syncs.resolve(sync.value()));
    }

    @Override
    public void deleteSyncSnapshot(VolumeSyncId sync) {
        locked(() -> delete(syncs.resolve(sync.value()), "delete sync snapshot", sync.value()));
    }

    /** {@inheritDoc} <p>As {@code BtrfsVolumeStore}: a parent whose sync snapshot is not here gives a full stream. */
    @Override
    public void send(VolumeSyncId sync, Optional<VolumeSyncId> parent, Path streamFile) {
        String step = "send volume";
        locked(() -> {
            if (!hasSyncSnapshot(sync)) throw failure(step, sync.value(), "sync snapshot " + sync + " does not exist on this host", null);
            var base = parent.filter(this::hasSyncSnapshot).map(this::syncSnapshotOf);
            try (OutputStream out = Files.newOutputStream(streamFile)) {
                TreeStream.write(syncSnapshotOf(sync), base, out);
            } catch (IOException e) {
                var failure = failure(step, sync.value(), e.toString(), e);
                try {
                    Files.deleteIfExists(streamFile);
                } catch (IOException cleanup) {
                    failure.addSuppressed(cleanup);
                }
                throw failure;
            }
            return null;
        });
    }

    private Snapshot syncSnapshotOf(VolumeSyncId sync) {
        return new Snapshot(sync.value(), syncs.resolve(sync.value()));
    }

    /**
     * {@inheritDoc}
     * <p>The parent of an incremental stream is the tree an earlier stream of the chain made, or
     * else a sync snapshot here of that name.
     */
    @Override
    public Path receive(VolumeId id, List<Path> streamFiles, long sizeBytes) {
        String step = "receive volume";
        if (streamFiles.isEmpty()) throw failure(step, id.value(), "no stream to receive", null);
        return locked(() -> {
            Path target = volumePath(id);
            requireAbsent(target, step, id.value());
            Path staging = work.resolve("receive-" + workNames.incrementAndGet());
            try {
                Files.createDirectory(staging);
                var received = new HashMap<String, Path>();
                Function<String, Optional<Path>> parents = name -> Optional.ofNullable(received.get(name))
                        .or(() -> VolumeSyncId.isValid(name) && hasSyncSnapshot(new VolumeSyncId(name))
                                ? Optional.of(syncs.resolve(name)) : Optional.empty());
                Path last = null;
                for (Path file : streamFiles) {
                    last = staging.resolve(Integer.toString(received.size()));
                    try (InputStream in = Files.newInputStream(file)) {
                        received.put(TreeStream.read(in, parents, last), last);
                    }
                }
                Files.move(last, target, StandardCopyOption.ATOMIC_MOVE);
                limits.put(id, sizeBytes);
                return target;
            } catch (IOException e) {
                throw failure(step, id.value(), e.toString(), e);
            } finally {
                try {
                    FileTrees.deleteRecursively(staging);
                } catch (IOException e) {
                    // Under work/: emptied at the next start.
                }
            }
        });
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
            // As the SPI says: not thrown. Whatever stays in scratch/ goes at the next start.
        }
    }

    private <T> T locked(Supplier<T> action) {
        lock.lock();
        try {
            return action.get();
        } finally {
            lock.unlock();
        }
    }

    private static <T extends Comparable<T>> Set<T> idsIn(Path dir, Predicate<String> valid, Function<String, T> id, String step) {
        var ids = new TreeSet<T>();
        try (Stream<Path> entries = Files.list(dir)) {
            entries.filter(DirectoryVolumeStore::isDirectory).map(p -> p.getFileName().toString()).filter(valid)
                    .forEach(name -> ids.add(id.apply(name)));
        } catch (IOException e) {
            throw StasisException.runtimeFailed(null, step, e.toString(), e);
        }
        return ids;
    }

    /**
     * Copies a tree to a new place, where it appears whole (as a btrfs snapshot does: a caller
     * without the lock never sees half of it); on failure, nothing is left.
     */
    private void copy(Path source, Path target, String step, String subject) {
        Path copy = work.resolve("copy-" + workNames.incrementAndGet());
        try {
            Trees.copy(source, copy);
            Files.move(copy, target, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            var failure = failure(step, subject, e.toString(), e);
            deleteQuietly(copy, failure);
            throw failure;
        }
    }

    private static Void delete(Path path, String step, String subject) {
        try {
            FileTrees.deleteRecursively(path);
            return null;
        } catch (IOException e) {
            throw failure(step, subject, e.toString(), e);
        }
    }

    private static void deleteQuietly(Path path, RuntimeException failure) {
        try {
            FileTrees.deleteRecursively(path);
        } catch (IOException cleanup) {
            failure.addSuppressed(cleanup);
        }
    }

    private static boolean isDirectory(Path path) {
        return Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS);
    }

    private Path volumePath(VolumeId id) {
        return volumes.resolve(id.value());
    }

    private static void requireAbsent(Path target, String step, String subject) {
        if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) throw failure(step, subject, target + " already exists", null);
    }

    /** {@code runtime_failed} naming the step and the volume (or snapshot), as {@code BtrfsVolumeStore} does. */
    private static StasisException failure(String step, String subject, String problem, Throwable cause) {
        var details = new LinkedHashMap<String, Object>();
        details.put("step", step);
        details.put("volume", subject);
        return new StasisException(ErrorCode.RUNTIME_FAILED, step + " failed for " + subject + ": " + problem, details, cause);
    }
}
