package io.stasis.testkit.fake;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.spi.BucketMount;
import io.stasis.core.spi.BucketMountId;
import io.stasis.core.spi.BucketMounts;
import io.stasis.core.spi.MountedBucket;
import io.stasis.core.spi.OwnedBucketMount;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * {@link BucketMounts} without FUSE or S3, verified by {@code BucketMountsSuite}. A bucket is a
 * directory, {@code <dir>/buckets/<name>}, made with {@link #createBucket}; a key is a file below
 * it. A mount is a symbolic link, {@code <dir>/mnt/<id>}, to the bucket's directory (or its
 * prefix's), so whatever is written through it is in the bucket at once: an unmount or a flush
 * has nothing to wait for, and nothing is ever pending. The endpoint and the key are not looked
 * at: every endpoint is the same one store.
 *
 * <p>What it cannot do: refuse writes to a read-only mount (it only reports the flag), die as a
 * daemon does, or keep uploads pending. {@link #openFiles} looks in {@code /proc} for processes
 * using the bucket's directory, so it also names users of another mount of the same bucket.
 */
public final class DirectoryBucketMounts implements BucketMounts {
    private final Path buckets;
    private final Path mountPoints;
    private final Map<BucketMountId, Mounted> live = new TreeMap<>((a, b) -> a.value().compareTo(b.value()));

    private record Mounted(MountedBucket mount, Path target) {
    }

    /** Keeps its buckets and mount points under {@code dir} (created if missing). */
    public DirectoryBucketMounts(Path dir) {
        try {
            this.buckets = Files.createDirectories(dir.resolve("buckets")).toRealPath();
            this.mountPoints = Files.createDirectories(dir.resolve("mnt")).toRealPath();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the directories of fake bucket mounts in " + dir, e);
        }
    }

    /** Makes an empty bucket if there is none of that name, and returns its directory: its files are its objects. */
    public synchronized Path createBucket(String name) {
        if (!name.matches("[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")) throw new IllegalArgumentException("not a bucket name: " + name);
        try {
            return Files.createDirectories(buckets.resolve(name));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public synchronized MountedBucket mount(BucketMount spec) {
        if (live.containsKey(spec.id()))
            throw new StasisException(ErrorCode.INVALID_STATE, "bucket mount " + spec.id() + " is mounted already", Map.of("mount", spec.id().value()));
        Path bucket = buckets.resolve(spec.bucket());
        if (!Files.isDirectory(bucket))
            throw new StasisException(ErrorCode.RUNTIME_FAILED, "mount of bucket " + spec.bucketPath() + " (mount " + spec.id() + ") failed: no such bucket",
                    Map.of("mount", spec.id().value(), "bucket", spec.bucketPath()));
        Path mountPoint = mountPoints.resolve(spec.id().value());
        try {
            Path target = spec.prefix().isEmpty() ? bucket : Files.createDirectories(bucket.resolve(spec.prefix()));
            Files.deleteIfExists(mountPoint); // a leftover of the same id is taken over
            Files.createSymbolicLink(mountPoint, target);
            var mounted = new MountedBucket(spec.id(), mountPoint, spec.readOnly());
            live.put(spec.id(), new Mounted(mounted, target));
            return mounted;
        } catch (IOException e) {
            throw new StasisException(ErrorCode.RUNTIME_FAILED, "mount of bucket " + spec.bucketPath() + " (mount " + spec.id() + ") failed: " + e,
                    Map.of("mount", spec.id().value()), e);
        }
    }

    /** Both flushes are the same here: every write is in the bucket already. */
    @Override
    public synchronized void unmount(BucketMountId id, Flush flush) {
        try {
            Files.deleteIfExists(mountPoints.resolve(id.value()));
        } catch (IOException e) {
            throw new StasisException(ErrorCode.RUNTIME_FAILED, "unmount of bucket mount " + id + " failed: " + e, Map.of("mount", id.value()), e);
        }
        live.remove(id);
    }

    /** Nothing is ever pending: an unmount at once. */
    @Override
    public int unmountOnceUploaded(BucketMountId id, Duration wait) {
        unmount(id, Flush.WAIT);
        return 0;
    }

    /** Nothing to wait for: writes go straight to the bucket. */
    @Override
    public void flush(BucketMountId id) {
    }

    @Override
    public synchronized Optional<MountedBucket> mounted(BucketMountId id) {
        return Optional.ofNullable(live.get(id)).map(Mounted::mount);
    }

    /** As the FUSE adapter does, from {@code /proc}, leaving out this process; by path, as a directory has no device of its own. */
    @Override
    public List<String> openFiles(BucketMountId id) {
        Mounted mounted;
        synchronized (this) {
            mounted = live.get(id);
        }
        if (mounted == null) return List.of();
        var out = new ArrayList<String>();
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            for (Path proc : procs.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit)).toList()) {
                long pid = Long.parseLong(proc.getFileName().toString());
                if (pid != ProcessHandle.current().pid()) usesOf(proc, mounted.target(), out);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list /proc", e);
        }
        return out;
    }

    /** Adds a line for each of the process's directories, descriptors and mapped files that lies under {@code target}. */
    private static void usesOf(Path proc, Path target, List<String> out) {
        var links = new ArrayList<>(List.of(proc.resolve("cwd"), proc.resolve("root")));
        try (Stream<Path> fds = Files.list(proc.resolve("fd"))) {
            fds.forEach(links::add);
        } catch (IOException | UncheckedIOException e) {
            return; // ended meanwhile, or another user's
        }
        String pid = proc.getFileName().toString();
        for (Path link : links) {
            try {
                Path used = Files.readSymbolicLink(link);
                if (used.startsWith(target)) out.add("pid " + pid + ": " + used);
            } catch (IOException | UnsupportedOperationException e) {
                // closed meanwhile
            }
        }
        try {
            for (String line : Files.readAllLines(proc.resolve("maps"))) {
                String[] fields = line.split("\\s+", 6);
                if (fields.length == 6 && Path.of(fields[5]).startsWith(target)) out.add("pid " + pid + ": " + fields[5] + " (mapped)");
            }
        } catch (IOException | RuntimeException e) {
            // ended meanwhile, or a name that is no path
        }
    }

    /** Every mount is live until unmounted: there is no daemon to lose, and nothing is pending. */
    @Override
    public synchronized List<OwnedBucketMount> listOwned() {
        return live.values().stream()
                .map(m -> new OwnedBucketMount(m.mount().id(), m.mount().hostPath(), OwnedBucketMount.State.ACTIVE, 0)).toList();
    }

    @Override
    public synchronized String toString() {
        return "directory bucket mounts in " + buckets.getParent() + ": " + live.keySet();
    }
}
