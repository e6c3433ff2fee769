package io.stasis.storage.btrfs;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.host.HostClaim;
import io.stasis.host.MountInfo;
import io.stasis.host.Mounts;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The btrfs filesystem that holds every template, sandbox root and checkpoint root snapshot, with
 * three directories on it: {@code templates/}, {@code roots/} and {@code checkpoints/}.
 *
 * <p>By default it is a sparse image file loop-mounted inside the data directory; a mount left by a
 * previous run is reused as it is, because sandboxes outlive the service and keep running from
 * their roots. Hence {@link #close()} never unmounts: {@link #unmountIfEmpty()} does, and only
 * when no sandbox root is left. Templates and checkpoint snapshots do not keep it mounted: nothing
 * runs from them, and they stay in the image file until the next mount. A pool on an existing
 * btrfs mount is never unmounted at all.
 *
 * <p>One process at a time: the pool holds an exclusive lock on {@code <dataDir>/btrfs-pool.lock}.
 */
public final class BtrfsPool implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(BtrfsPool.class);
    private static final String LABEL = "stasis-roots";
    /**
     * noatime: reads inside sandboxes do not turn into metadata writes (which would also unshare
     * the metadata of every snapshot). discard=async: space freed by deleted roots is punched out
     * of the sparse image file, so it does not keep the high-water mark forever.
     */
    static final List<String> MOUNT_OPTIONS = List.of("noatime", "discard=async");
    private static final Duration AUTOCLEAR_WAIT = Duration.ofSeconds(2);

    private final BtrfsPoolConfig config;
    private final Path path;
    private final boolean ownsMount;
    private final Btrfs btrfs;
    private final Mounts mounts;
    private final LoopDevices loops;
    private final HostClaim claim;

    private BtrfsPool(BtrfsPoolConfig config, Path path, boolean ownsMount, Btrfs btrfs, Mounts mounts, LoopDevices loops,
                      HostClaim claim) {
        this.config = config;
        this.path = path;
        this.ownsMount = ownsMount;
        this.btrfs = btrfs;
        this.mounts = mounts;
        this.loops = loops;
        this.claim = claim;
    }

    /**
     * Opens the pool: creates and formats the image on first use, mounts it unless a previous run
     * left it mounted, and checks that the filesystem is btrfs.
     * <p>On failure: {@code runtime_failed}, nothing left mounted by this call.
     */
    public static BtrfsPool open(BtrfsPoolConfig config) {
        return open(config, Btrfs.fromSystem(), Mounts.fromSystem(), LoopDevices.fromSystem());
    }

    static BtrfsPool open(BtrfsPoolConfig config, Btrfs btrfs, Mounts mounts, LoopDevices loops) {
        String version = btrfs.version();
        String holder = "process " + ProcessHandle.current().pid();
        var claim = switch (HostClaim.take(config.dataDir().resolve("btrfs-pool.lock"), holder)) {
            case HostClaim.Result.Claimed claimed -> claimed.claim();
            case HostClaim.Result.Taken taken ->
                    throw failure("open pool", "another process (" + taken.holder() + ") has the pool in " + config.dataDir() + " open", null);
        };
        try {
            boolean owns = config.existingMount().isEmpty();
            Path path = owns ? mountImage(config, btrfs, mounts, loops) : checkExisting(config.existingMount().get());
            Files.createDirectories(path.resolve("templates"));
            Files.createDirectories(path.resolve("roots"));
            Files.createDirectories(path.resolve("checkpoints"));
            log.atInfo().addKeyValue("path", path).addKeyValue("ownsMount", owns).addKeyValue("btrfsProgs", version).log("btrfs pool open");
            return new BtrfsPool(config, path, owns, btrfs, mounts, loops, claim);
        } catch (IOException e) {
            release(claim);
            throw failure("open pool", e.toString(), e);
        } catch (RuntimeException e) {
            release(claim);
            throw e;
        }
    }

    private static Path checkExisting(Path given) throws IOException {
        Path real = given.toRealPath();
        requireBtrfs(real, MountInfo.read().containing(real).orElse(null));
        return real;
    }

    private static Path mountImage(BtrfsPoolConfig config, Btrfs btrfs, Mounts mounts, LoopDevices loops) throws IOException {
        Files.createDirectories(config.poolPath());
        Path target = config.poolPath().toRealPath();
        var existing = MountInfo.read().at(target);
        if (existing.isPresent()) {
            // A previous run's mount, with sandboxes possibly still running from it: keep it.
            requireBtrfs(target, existing.get());
            log.atInfo().addKeyValue("path", target).addKeyValue("source", existing.get().source()).log("reusing mounted btrfs pool");
            return target;
        }
        Path image = config.imageFile();
        if (!Files.exists(image)) createImage(image, config.imageSizeBytes(), btrfs);
        image = image.toRealPath();
        detachStaleLoops(image, loops);
        mounts.mountLoopImage("btrfs", image, target, MOUNT_OPTIONS);
        try {
            requireBtrfs(target, MountInfo.read().at(target).orElse(null));
        } catch (RuntimeException e) {
            try {
                mounts.unmount(target);
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        return target;
    }

    /** Sparse file, formatted under a temporary name: a half-made image never has the real name. */
    private static void createImage(Path image, long size, Btrfs btrfs) throws IOException {
        Path partial = image.resolveSibling(image.getFileName() + ".partial");
        Files.deleteIfExists(partial);
        try (var file = new RandomAccessFile(partial.toFile(), "rw")) {
            file.setLength(size);
        }
        btrfs.mkfs(partial, LABEL);
        Files.move(partial, image, StandardCopyOption.ATOMIC_MOVE);
        log.atInfo().addKeyValue("image", image).addKeyValue("sizeBytes", size).log("created btrfs image");
    }

    /**
     * A loop device still attached to the image but not mounted (a crash between attach and
     * mount) would be reused by mount without autoclear; one mounted elsewhere must not be
     * mounted a second time.
     */
    private static void detachStaleLoops(Path image, LoopDevices loops) {
        var table = MountInfo.read();
        for (Path device : loops.backedBy(image)) {
            var elsewhere = table.entries().stream().filter(e -> e.source().equals(device.toString())).findFirst();
            if (elsewhere.isPresent())
                throw failure("open pool", "image " + image + " is already mounted at " + elsewhere.get().mountPoint()
                        + " (through " + device + "); unmount it first", null);
            log.atWarn().addKeyValue("device", device).addKeyValue("image", image).log("detaching stale loop device");
            loops.detach(device);
        }
    }

    private static void requireBtrfs(Path path, MountInfo.Entry mount) {
        if (mount == null) throw failure("open pool", path + " is not mounted", null);
        if (!mount.fsType().equals("btrfs"))
            throw failure("open pool", path + " is on " + mount.fsType() + " (" + mount.mountPoint() + "), not btrfs", null);
    }

    /** The top directory of the pool. */
    public Path path() {
        return path;
    }

    public BtrfsPoolConfig config() {
        return config;
    }

    /** True when the pool is the image this class mounts (and may unmount), false on an existing mount. */
    public boolean ownsMount() {
        return ownsMount;
    }

    Path templatesDir() {
        return path.resolve("templates");
    }

    Path rootsDir() {
        return path.resolve("roots");
    }

    Path checkpointsDir() {
        return path.resolve("checkpoints");
    }

    Btrfs btrfs() {
        return btrfs;
    }

    Mounts mounts() {
        return mounts;
    }

    /**
     * True if any sandbox root exists: the filesystem must then stay mounted. Only {@code roots/}
     * counts; templates and checkpoint snapshots are data at rest and survive an unmount.
     */
    public boolean hasRoots() {
        try (Stream<Path> entries = Files.list(rootsDir())) {
            return entries.anyMatch(p -> Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS));
        } catch (NoSuchFileException e) {
            return false;
        } catch (IOException e) {
            throw failure("list roots", e.toString(), e);
        }
    }

    /**
     * Unmounts the image and detaches its loop device, but only if this pool owns the mount and no
     * sandbox root is left (templates and checkpoint snapshots do not count: they stay in the image
     * and are there again at the next {@link #open}). Returns whether the pool is now unmounted.
     * <p>On failure (e.g. the filesystem is busy): {@code runtime_failed}, still mounted.
     */
    public synchronized boolean unmountIfEmpty() {
        if (!ownsMount) return false;
        if (hasRoots()) {
            log.atInfo().addKeyValue("path", path).log("sandbox roots remain: pool stays mounted");
            return false;
        }
        // Busy only because of file handles still closing (a request that is ending): no root is
        // left, so a lazy detach is safe and the loop device goes with the last handle.
        if (MountInfo.read().at(path).isPresent() && mounts.unmountOrDetach(path))
            log.atWarn().addKeyValue("path", path).log("pool was busy at unmount; detached lazily");
        Path image = config.imageFile();
        long deadline = System.nanoTime() + AUTOCLEAR_WAIT.toNanos();
        // Autoclear detaches the loop device when the last reference goes; give it a moment.
        while (!loops.backedBy(image).isEmpty() && System.nanoTime() < deadline)
            LockSupport.parkNanos(10_000_000);
        for (Path device : loops.backedBy(image)) loops.detach(device);
        return true;
    }

    /** Releases the pool's lock. Never unmounts: see {@link #unmountIfEmpty()}. */
    @Override
    public synchronized void close() {
        release(claim);
    }

    private static void release(HostClaim claim) {
        try {
            claim.close();
        } catch (UncheckedIOException e) {
            log.atWarn().setCause(e).log("releasing the pool lock failed");
        }
    }

    static StasisException failure(String step, String problem, Throwable cause) {
        return new StasisException(ErrorCode.RUNTIME_FAILED, step + " failed: " + problem, Map.of("step", step), cause);
    }
}
