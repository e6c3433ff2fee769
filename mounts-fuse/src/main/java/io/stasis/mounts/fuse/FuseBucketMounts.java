package io.stasis.mounts.fuse;

import io.stasis.core.concurrent.KeyedLock;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.spi.BucketMount;
import io.stasis.core.spi.BucketMountId;
import io.stasis.core.spi.BucketMounts;
import io.stasis.core.spi.FileOwner;
import io.stasis.core.spi.MountedBucket;
import io.stasis.core.spi.OwnedBucketMount;
import io.stasis.host.FileTrees;
import io.stasis.host.MountInfo;
import io.stasis.host.Mounts;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link BucketMounts} through FUSE, each mount served by its own {@code rclone mount} daemon (see
 * {@link Rclone} for why rclone, and its flags).
 *
 * <p><b>Layout.</b> Two directories per mount, named by its id, under a directory only this class
 * writes to:
 * <pre>
 * &lt;dir&gt;/                    0710 root, group: the sandboxes' root ({@link Options#owner()})
 *   mnt/                    0711: the sandboxes' root may pass through to its bind source; no other host user can
 *     &lt;id&gt;                  the FUSE mount point: {@link MountedBucket#hostPath()}
 *   bin/stasis-pin          0700: the daemons' proxy to their endpoint (see {@link Rclone})
 *   private/                0700
 *     &lt;id&gt;/                 0700: the daemon's working directory (how it is found again)
 *       cache/              rclone's cache: ranges read, files written and not uploaded yet
 *       rclone.log          the daemon's log (no secrets at INFO); rclone.out its stdout and stderr
 *       rclone.conf         the remote with its key, 0600, only while the daemon starts
 * </pre>
 * Nothing else is kept: after a crash, {@link #listOwned()} rebuilds the picture from these
 * directories, the mount table and the daemons' {@code /proc/PID/cwd}.
 *
 * <p><b>Consistency</b> (rclone's full cache mode): a file written through the mount is uploaded
 * as one object {@link Options#writeBack()} after its last close (a file kept open is never
 * uploaded while open); {@link #unmount(BucketMountId, Flush)} with {@code WAIT} returns only
 * once nothing is pending. Listings are cached for {@link Options#dirCacheTime()}, so objects
 * added to the bucket by others appear within that time; a file's data read once is served from
 * the cache while the object's size and modification time are unchanged.
 *
 * <p>Calls for different ids run in parallel; calls for one id one after another.
 */
public final class FuseBucketMounts implements BucketMounts {
    private static final Logger log = LoggerFactory.getLogger(FuseBucketMounts.class);
    /** Mount points, {@code mnt/<id>}: 0711, so a sandbox's root (another uid) may pass through to its bind source. */
    static final String MOUNT_POINTS = "mnt";
    /** The daemons' private directories, {@code private/<id>}: 0700, nobody else gets in. */
    static final String PRIVATE_DIRS = "private";
    /** The helper programs, {@code bin/}: 0700. */
    static final String HELPERS = "bin";
    /** How long the pending count must stay zero before an unmount with {@code WAIT} goes ahead. */
    static final Duration SETTLE = Duration.ofMillis(300);

    private final Path dir;
    private final Rclone rclone;
    private final Optional<DaemonCgroups> cgroups;
    private final Mounts mounts;
    private final Options options;
    private final KeyedLock<BucketMountId> locks = new KeyedLock<>();

    /**
     * How every mount of this instance behaves.
     *
     * @param owner          who owns the files inside (uid and gid, as the host sees them): the
     *                       sandboxes' root, so it can write
     * @param umask          mode bits cleared from files (0644) and directories (0755); the kernel
     *                       enforces the modes ({@code default_permissions})
     * @param writeBack      how long after its last close a written file is uploaded
     * @param dirCacheTime   how long a directory listing is reused before the bucket is asked again
     * @param cacheMaxBytes  the most disk the cache of one mount may take (rclone evicts least
     *                       recently used, unmodified data past it; files not yet uploaded are kept)
     * @param cacheMaxAge    data unused for this long is evicted
     * @param readChunkBytes the first range request of a read; sequential reads double it up to 16 times this
     * @param connectTimeout TCP connect timeout to the endpoint
     * @param ioTimeout      idle timeout of one request; with 3 low-level retries, an unreachable
     *                       endpoint makes a call fail with EIO after about 3 times this
     * @param mountTimeout   the longest {@link #mount} waits for the mount and its first listing
     * @param flushTimeout   the longest {@link #unmount} with {@code WAIT} waits for pending uploads
     * @param daemonMemoryBytes the memory one mount's daemon may use (its cgroup's limit, see {@link DaemonCgroups})
     */
    public record Options(FileOwner owner, int umask, Duration writeBack, Duration dirCacheTime, long cacheMaxBytes,
                          Duration cacheMaxAge, long readChunkBytes, Duration connectTimeout, Duration ioTimeout,
                          Duration mountTimeout, Duration flushTimeout, long daemonMemoryBytes) {
        /** Sandbox root (100000:100000), umask 022, 2 s write-back, 10 s listings, 1 GiB cache, 4 MiB reads. */
        public static final Options DEFAULTS = new Options(new FileOwner(100_000, 100_000), 0022, Duration.ofSeconds(2),
                Duration.ofSeconds(10), 1L << 30, Duration.ofHours(1), 4L << 20, Duration.ofSeconds(10), Duration.ofSeconds(30),
                Duration.ofSeconds(60), Duration.ofMinutes(5), 128L << 20);

        public Options {
            if (owner == null || owner.uid() < 0 || owner.gid() < 0) throw new IllegalArgumentException("owner must be a uid and gid >= 0, was " + owner);
            if (umask < 0 || umask > 0777) throw new IllegalArgumentException("umask must be 0 to 0777, was 0" + Integer.toOctalString(umask));
            for (var d : new Duration[] {writeBack, dirCacheTime, cacheMaxAge, connectTimeout, ioTimeout, mountTimeout, flushTimeout})
                if (d == null || d.isNegative()) throw new IllegalArgumentException("durations must be >= 0, was " + d);
            if (cacheMaxBytes < 1 << 20) throw new IllegalArgumentException("cacheMaxBytes must be at least 1 MiB, was " + cacheMaxBytes);
            if (readChunkBytes < 64 << 10) throw new IllegalArgumentException("readChunkBytes must be at least 64 KiB, was " + readChunkBytes);
            if (daemonMemoryBytes < 32 << 20) throw new IllegalArgumentException("daemonMemoryBytes must be at least 32 MiB, was " + daemonMemoryBytes);
        }

        public Options withOwner(FileOwner owner) {
            return new Options(owner, umask, writeBack, dirCacheTime, cacheMaxBytes, cacheMaxAge, readChunkBytes, connectTimeout, ioTimeout, mountTimeout, flushTimeout, daemonMemoryBytes);
        }

        public Options withWriteBack(Duration writeBack) {
            return new Options(owner, umask, writeBack, dirCacheTime, cacheMaxBytes, cacheMaxAge, readChunkBytes, connectTimeout, ioTimeout, mountTimeout, flushTimeout, daemonMemoryBytes);
        }

        public Options withDirCacheTime(Duration dirCacheTime) {
            return new Options(owner, umask, writeBack, dirCacheTime, cacheMaxBytes, cacheMaxAge, readChunkBytes, connectTimeout, ioTimeout, mountTimeout, flushTimeout, daemonMemoryBytes);
        }

        public Options withDaemonMemory(long bytes) {
            return new Options(owner, umask, writeBack, dirCacheTime, cacheMaxBytes, cacheMaxAge, readChunkBytes, connectTimeout, ioTimeout, mountTimeout, flushTimeout, bytes);
        }

        public Options withTimeouts(Duration connect, Duration io, Duration mount, Duration flush) {
            return new Options(owner, umask, writeBack, dirCacheTime, cacheMaxBytes, cacheMaxAge, readChunkBytes, connect, io, mount, flush, daemonMemoryBytes);
        }
    }

    FuseBucketMounts(Path dir, Rclone rclone, Mounts mounts, Options options, Optional<DaemonCgroups> cgroups) {
        this.dir = dir;
        this.rclone = rclone;
        this.mounts = mounts;
        this.options = options;
        this.cgroups = cgroups;
    }

    /**
     * Opens the mounts kept under {@code dir} (created if missing, see the layout above) with the system's rclone,
     * after checking it (version, {@code /dev/fuse}). Mounts left by an earlier run are not touched:
     * {@link #listOwned()} shows them.
     */
    public static FuseBucketMounts open(Path dir, Options options) {
        Path real;
        try {
            for (var sub : List.of(dir, dir.resolve(MOUNT_POINTS), dir.resolve(PRIVATE_DIRS), dir.resolve(HELPERS))) Files.createDirectories(sub);
            Files.setPosixFilePermissions(dir.resolve(HELPERS), PosixFilePermissions.fromString("rwx------"));
            // only root and the sandboxes' root group get past <dir>; below it, mnt/ lets them through, private/ does not
            Files.setAttribute(dir, "unix:gid", options.owner().gid());
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx--x---"));
            Files.setPosixFilePermissions(dir.resolve(MOUNT_POINTS), PosixFilePermissions.fromString("rwx--x--x"));
            Files.setPosixFilePermissions(dir.resolve(PRIVATE_DIRS), PosixFilePermissions.fromString("rwx------"));
            real = dir.toRealPath();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the bucket mounts directory " + dir, e);
        }
        var rclone = Rclone.fromSystem(real.resolve(HELPERS));
        String version = rclone.checkVersion();
        log.atInfo().addKeyValue("dir", real).addKeyValue("rclone", version).log("bucket mounts ready");
        return new FuseBucketMounts(real, rclone, Mounts.fromSystem(), options, DaemonCgroups.open(real, options.daemonMemoryBytes()));
    }

    /** Where the mounts live. */
    public Path dir() {
        return dir;
    }

    @Override
    public MountedBucket mount(BucketMount spec) {
        var lock = lock(spec.id());
        try {
            Path privateDir = privateDir(spec.id());
            Path mountPoint = mountPoint(spec.id());
            if (Files.exists(privateDir) || Files.exists(mountPoint)) takeOverLeftover(spec.id(), privateDir, mountPoint);
            try {
                Files.createDirectories(privateDir);
                Files.setPosixFilePermissions(privateDir, PosixFilePermissions.fromString("rwx------"));
                Files.createDirectories(mountPoint);
            } catch (IOException e) {
                throw Rclone.failure("mount", spec, "cannot create " + mountPoint + ": " + e.getMessage(), null, e);
            }
            try {
                rclone.mount(spec, privateDir, mountPoint, options, daemonCgroup(spec));
            } catch (RuntimeException e) {
                try {
                    if (Rclone.pendingUploads(privateDir) == 0) removeDirs(spec.id());
                    cgroups.ifPresent(c -> c.remove(spec.id()));
                } catch (RuntimeException cleanup) {
                    e.addSuppressed(cleanup);
                }
                throw e;
            }
            return new MountedBucket(spec.id(), mountPoint, spec.readOnly());
        } finally {
            lock.close();
        }
    }

    /**
     * A directory of the same id exists: refuse if it is live, else clean what is left (a dead mount)
     * but keep the cache, whose pending uploads the new daemon resumes.
     */
    private void takeOverLeftover(BucketMountId id, Path privateDir, Path mountPoint) {
        var daemon = rclone.daemonIn(privateDir);
        boolean mounted = Rclone.isMounted(mountPoint);
        if (daemon.isPresent())
            throw new StasisException(ErrorCode.INVALID_STATE, "bucket mount " + id + " is " + (mounted ? "mounted" : "detached with files still open")
                    + " already (rclone pid " + daemon.get().pid() + ")", Map.of("mount", id.value(), "state", mounted ? "mounted" : "detached"));
        if (MountInfo.read().at(mountPoint).isPresent()) {
            mounts.unmountOrDetach(mountPoint); // dead FUSE: ENOTCONN for everyone until it goes
            log.atInfo().addKeyValue("mount", id).log("removed the dead mount of an earlier bucket daemon");
        }
        int pending = Rclone.pendingUploads(privateDir);
        if (pending > 0) log.atInfo().addKeyValue("mount", id).addKeyValue("pendingUploads", pending).log("resuming uploads of an earlier daemon");
    }

    @Override
    public void unmount(BucketMountId id, Flush flush) {
        var lock = lock(id);
        try {
            unmountLocked(id, flush, Optional.empty());
        } finally {
            lock.close();
        }
    }

    @Override
    public int unmountOnceUploaded(BucketMountId id, Duration wait) {
        var lock = lock(id);
        try {
            return unmountLocked(id, Flush.WAIT, Optional.of(wait));
        } finally {
            lock.close();
        }
    }

    /**
     * {@link #unmount}, the caller holding the id's lock. With {@code briefly}, a {@code WAIT} for a
     * live daemon's uploads lasts at most that long, and what is still pending then is returned
     * instead of failing, the mount left as it is ({@link #unmountOnceUploaded}); 0 otherwise.
     */
    private int unmountLocked(BucketMountId id, Flush flush, Optional<Duration> briefly) {
        Path privateDir = privateDir(id);
        Path mountPoint = mountPoint(id);
        if (!Files.isDirectory(privateDir) && !Files.exists(mountPoint)) return 0;
        var daemon = rclone.daemonIn(privateDir);
        var entry = MountInfo.read().at(mountPoint);
        boolean mounted = entry.isPresent();
        boolean readOnly = entry.map(e -> List.of(e.superOptions().split(",")).contains("ro")).orElse(false);
        boolean live = daemon.isPresent() && mounted;
        if (flush == Flush.WAIT && !readOnly) {
            if (briefly.isPresent() && live) {
                int pending = pendingAfter(privateDir, briefly.get());
                if (pending > 0) {
                    log.atInfo().addKeyValue("mount", id).addKeyValue("pendingUploads", pending).log("bucket mount kept until its uploads are done");
                    return pending;
                }
            } else {
                awaitUploads(id, privateDir, live);
            }
        }
        if (mounted) {
            boolean lazy = mounts.unmountOrDetach(mountPoint);
            if (lazy && daemon.isPresent()) {
                // a file is open: the daemon serves it until it is closed, then ends; the directory goes on a later call
                log.atInfo().addKeyValue("mount", id).addKeyValue("pid", daemon.get().pid()).log("bucket mount busy: detached lazily");
                return 0;
            }
        } else if (daemon.isPresent() && flush == Flush.WAIT) {
            log.atInfo().addKeyValue("mount", id).log("bucket mount detached earlier still has open files");
            return 0;
        }
        // unmounted, rclone ends in about a second; one still retrying uploads that DISCARD drops needs a SIGTERM
        if (daemon.isPresent() && Rclone.awaitExit(daemon.get(), flush == Flush.WAIT ? Duration.ofSeconds(10) : Duration.ofSeconds(2)))
            log.atWarn().addKeyValue("mount", id).addKeyValue("pid", daemon.get().pid()).log("rclone did not end after its unmount: killed");
        int lost = Rclone.pendingUploads(privateDir);
        if (lost > 0 && flush == Flush.WAIT) // a write recorded after the last look: keep it for the next mount of this id
            throw unmountFailure(id, "unmounted, but " + lost + " files written just before were not uploaded: they are kept;"
                    + " mount the same id again to upload them, or unmount with DISCARD", privateDir);
        if (lost > 0) log.atWarn().addKeyValue("mount", id).addKeyValue("files", lost).log("discarded files that were not uploaded");
        removeDirs(id);
        cgroups.ifPresent(c -> c.remove(id));
        log.atInfo().addKeyValue("mount", id).log("bucket unmounted");
        return 0;
    }

    /** The {@code cgroup.procs} of the mount's daemon, made with its memory limit; empty where cgroups cannot be used. */
    private Optional<Path> daemonCgroup(BucketMount spec) {
        if (cgroups.isEmpty()) return Optional.empty();
        try {
            return Optional.of(cgroups.get().prepare(spec.id()));
        } catch (IOException e) {
            throw Rclone.failure("mount", spec, "cannot make the daemon's memory cgroup: " + e.getMessage(), null, e);
        }
    }

    /** Where mount {@code id}'s daemon is held to its memory, if anywhere (tests). */
    Optional<Path> daemonCgroupDir(BucketMountId id) {
        return cgroups.map(c -> c.dirOf(id));
    }

    @Override
    public void flush(BucketMountId id) {
        var lock = lock(id);
        try {
            if (mounted(id).isPresent()) awaitUploads(id, privateDir(id), true);
        } finally {
            lock.close();
        }
    }

    /** With a live daemon, waits until it has uploaded everything; without one, fails if anything is pending. */
    private void awaitUploads(BucketMountId id, Path privateDir, boolean live) {
        int pending = Rclone.pendingUploads(privateDir);
        if (pending == 0 && !live) return;
        if (!live)
            throw unmountFailure(id, pending + " files written through it were never uploaded and its daemon is gone:"
                    + " mount the same id again to upload them, or unmount with DISCARD", privateDir);
        pending = pendingAfter(privateDir, options.flushTimeout());
        if (pending > 0)
            throw unmountFailure(id, pending + " files still not uploaded after " + options.flushTimeout().toSeconds()
                    + " s; the mount stays (unmount again later, or with DISCARD)", privateDir);
    }

    /**
     * Waits up to {@code timeout} for the live daemon's pending uploads to settle at zero; returns
     * how many are pending then (0: nothing). rclone marks a file dirty when the kernel's
     * (asynchronous) release of it arrives, milliseconds after the close: only a count that stays
     * zero for {@link #SETTLE} counts as nothing pending, and that is looked for even past the timeout.
     */
    private static int pendingAfter(Path privateDir, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        long pauseMillis = 10;
        long zeroSince = -1;
        int pending;
        while ((pending = Rclone.pendingUploads(privateDir)) > 0 || zeroSince < 0 || System.nanoTime() - zeroSince < SETTLE.toNanos()) {
            if (pending > 0) zeroSince = -1;
            else if (zeroSince < 0) zeroSince = System.nanoTime();
            if (pending > 0 && System.nanoTime() > deadline) return pending;
            try {
                Thread.sleep(pauseMillis); // polling rclone's cache metadata: there is no event for it
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Math.max(pending, 1);
            }
            pauseMillis = Math.min(pauseMillis * 2, 250);
        }
        return 0;
    }

    @Override
    public Optional<MountedBucket> mounted(BucketMountId id) {
        Path privateDir = privateDir(id);
        Path mountPoint = mountPoint(id);
        var entry = MountInfo.read().at(mountPoint).filter(e -> e.fsType().equals(Rclone.FS_TYPE));
        if (entry.isEmpty() || rclone.daemonIn(privateDir).isEmpty()) return Optional.empty();
        boolean readOnly = List.of(entry.get().superOptions().split(",")).contains("ro");
        return Optional.of(new MountedBucket(id, mountPoint, readOnly));
    }

    @Override
    public List<String> openFiles(BucketMountId id) {
        var live = mounted(id);
        if (live.isEmpty()) return List.of();
        long dev;
        try {
            dev = ((Number) Files.getAttribute(live.get().hostPath(), "unix:dev")).longValue();
        } catch (IOException e) {
            return List.of(); // unmounted meanwhile
        }
        long daemon = rclone.daemonIn(privateDir(id)).map(ProcessHandle::pid).orElse(-1L);
        return OpenFiles.onDevice(dev, daemon);
    }

    @Override
    public List<OwnedBucketMount> listOwned() {
        var owned = new ArrayList<OwnedBucketMount>();
        var table = MountInfo.read();
        var ids = new TreeSet<String>();
        for (String sub : List.of(PRIVATE_DIRS, MOUNT_POINTS)) {
            try (Stream<Path> entries = Files.list(dir.resolve(sub))) {
                entries.map(p -> p.getFileName().toString()).filter(BucketMountId::isValid).forEach(ids::add);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot list " + dir.resolve(sub), e);
            }
        }
        for (String name : ids) {
            var id = new BucketMountId(name);
            boolean mounted = table.at(mountPoint(id)).isPresent();
            boolean alive = rclone.daemonIn(privateDir(id)).isPresent();
            var state = mounted ? (alive ? OwnedBucketMount.State.ACTIVE : OwnedBucketMount.State.DEAD)
                    : (alive ? OwnedBucketMount.State.DETACHED : OwnedBucketMount.State.UNMOUNTED);
            owned.add(new OwnedBucketMount(id, mountPoint(id), state, Rclone.pendingUploads(privateDir(id))));
        }
        return owned;
    }

    /** The daemon's working directory: cache, log, config while it starts. */
    Path privateDir(BucketMountId id) {
        return dir.resolve(PRIVATE_DIRS).resolve(id.value());
    }

    Path mountPoint(BucketMountId id) {
        return dir.resolve(MOUNT_POINTS).resolve(id.value());
    }

    /**
     * Deletes a mount's directories: the mount point only if empty (rmdir, never a recursive walk into
     * what might be a bucket), the private directory never while anything is mounted in it.
     */
    private void removeDirs(BucketMountId id) {
        var left = MountInfo.read().atOrBelow(mountPoint(id));
        if (left.isEmpty()) left = MountInfo.read().atOrBelow(privateDir(id));
        if (!left.isEmpty())
            throw new StasisException(ErrorCode.RUNTIME_FAILED, "not deleting the directories of bucket mount " + id + ": still mounted there: "
                    + left.stream().map(MountInfo.Entry::mountPoint).toList(), Map.of("step", "remove mount directory", "mount", id.value()));
        try {
            Files.deleteIfExists(mountPoint(id));
            FileTrees.deleteRecursively(privateDir(id));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete the directories of bucket mount " + id, e);
        }
    }

    private static StasisException unmountFailure(BucketMountId id, String problem, Path privateDir) {
        String tail = Rclone.tails(privateDir);
        return new StasisException(ErrorCode.RUNTIME_FAILED, "unmount of bucket mount " + id + " failed: " + problem,
                tail.isEmpty() ? Map.of("step", "unmount", "mount", id.value()) : Map.of("step", "unmount", "mount", id.value(), "stderr", tail));
    }

    private KeyedLock.Held lock(BucketMountId id) {
        return locks.exclusive(id);
    }
}
