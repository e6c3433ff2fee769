package io.stasis.mounts.fuse;

import io.stasis.core.blob.Sha256;
import io.stasis.core.spi.BucketMountId;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A memory cgroup per bucket mount for its daemon (the pin and rclone), limited to
 * {@link FuseBucketMounts.Options#daemonMemoryBytes()}: a daemon's memory is bounded, and the
 * service counts exactly that much in its sandbox's tenant's memory. A daemon past it is killed by
 * the kernel like any process out of its cgroup's memory; its mount then fails with
 * {@code ENOTCONN} as after any daemon crash.
 *
 * <p>Layout: {@code <memory root>/stasis-buckets-<8 hex of the mounts directory>/<id>}, so
 * instances on one host (different data directories) never touch each other's. Under cgroup v1
 * the memory root is {@code /sys/fs/cgroup/memory} and the limit {@code memory.limit_in_bytes};
 * under v2 it is {@code /sys/fs/cgroup} and {@code memory.max}. A host with neither runs the
 * daemons unbounded (logged at start).
 */
final class DaemonCgroups {
    private static final Logger log = LoggerFactory.getLogger(DaemonCgroups.class);
    private static final Path V1 = Path.of("/sys/fs/cgroup/memory");
    private static final Path V2 = Path.of("/sys/fs/cgroup");
    /** How long {@link #remove} waits for the last process to leave. */
    private static final Duration EMPTY_WAIT = Duration.ofSeconds(2);

    private final Path parent;
    private final String limitFile;
    private final long bytes;

    private DaemonCgroups(Path parent, String limitFile, long bytes) {
        this.parent = parent;
        this.limitFile = limitFile;
        this.bytes = bytes;
    }

    /** The daemons' cgroups of the mounts under {@code mountsDir}; empty where the host has no memory controller to use. */
    static Optional<DaemonCgroups> open(Path mountsDir, long bytes) {
        String name = "stasis-buckets-" + Sha256.ofText(mountsDir.toString()).substring(0, 8);
        DaemonCgroups cgroups;
        if (Files.isRegularFile(V1.resolve("memory.limit_in_bytes"))) cgroups = new DaemonCgroups(V1.resolve(name), "memory.limit_in_bytes", bytes);
        else if (controllers(V2).contains("memory")) cgroups = new DaemonCgroups(V2.resolve(name), "memory.max", bytes);
        else {
            log.atWarn().log("no cgroup memory controller: bucket mount daemons run without a memory limit");
            return Optional.empty();
        }
        return Optional.of(cgroups);
    }

    /**
     * Makes (or takes over) the cgroup of mount {@code id} with the limit, and returns its
     * {@code cgroup.procs}: what stasis-pin joins ({@code STASIS_PIN_CGROUP}) before it starts rclone.
     */
    Path prepare(BucketMountId id) throws IOException {
        Path dir = parent.resolve(id.value());
        Files.createDirectories(dir);
        Files.writeString(dir.resolve(limitFile), Long.toString(bytes));
        return dir.resolve("cgroup.procs");
    }

    /**
     * Removes the cgroup of mount {@code id} once no process is in it (the pin leaves a moment
     * after its rclone: waited for, up to {@link #EMPTY_WAIT}), and the parent with the last one
     * (a {@link #prepare} makes it again); false if a process stays (a daemon serving a detached
     * mount: a later unmount removes it).
     */
    boolean remove(BucketMountId id) {
        Path dir = parent.resolve(id.value());
        try {
            if (Files.isDirectory(dir)) {
                long deadline = System.nanoTime() + EMPTY_WAIT.toNanos();
                while (!Files.readString(dir.resolve("cgroup.procs")).isBlank()) {
                    if (System.nanoTime() > deadline) return false;
                    Thread.sleep(10);
                }
                Files.deleteIfExists(dir); // rmdir: a cgroup's files go with it
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (IOException e) {
            log.atWarn().addKeyValue("cgroup", dir).addKeyValue("reason", e.toString()).log("cannot remove a bucket daemon's cgroup");
            return false;
        }
        try {
            Files.deleteIfExists(parent);
        } catch (IOException stillUsed) {
            // another mount's cgroup is in it
        }
        return true;
    }

    /** Where mount {@code id}'s daemon is limited (for tests and messages). */
    Path dirOf(BucketMountId id) {
        return parent.resolve(id.value());
    }

    private static String controllers(Path root) {
        try {
            return Files.readString(root.resolve("cgroup.controllers"));
        } catch (IOException e) {
            return "";
        }
    }
}
