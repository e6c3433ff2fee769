package io.stasis.storage.btrfs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The subvolume operations on the hot path of sandbox creation and deletion, and the quota
 * calls that limit what a subvolume may hold. Two implementations
 * do the same thing: {@link BtrfsIoctl} calls the kernel directly (no process spawn) and
 * {@link Btrfs} runs the {@code btrfs} CLI, the reference. Failures are {@code runtime_failed}
 * {@link io.stasis.core.error.StasisException}s whose details carry the {@code errno} where known.
 */
interface Subvolumes {
    /** btrfs gives the root directory of every subvolume this inode number. */
    long SUBVOLUME_ROOT_INODE = 256;

    /** Creates an empty subvolume at {@code path}; its parent must exist on the same btrfs. */
    void create(Path path);

    /** Snapshots subvolume {@code source} as a new subvolume {@code target} (cost independent of size). */
    void snapshot(Path source, Path target, boolean readOnly);

    /** Deletes the subvolume at {@code path} (read-only or not). Fails if it contains nested subvolumes. */
    void delete(Path path);

    /** Writes the filesystem's unwritten data to disk (what a snapshot would otherwise wait for). */
    void sync(Path anyPath);

    /**
     * Turns on simple quotas (squota) for the filesystem holding {@code anyPath}: each extent is
     * charged to the subvolume that wrote it, and only to it, with no back-reference walks at
     * transaction commit. Data already on the filesystem is never charged. Does nothing if quotas
     * are on already, in whatever mode (the kernel does not switch modes: {@link #disableQuotas}
     * first). Needs kernel >= 6.7; refused with {@code EINVAL} by older ones.
     */
    void enableSimpleQuotas(Path anyPath);

    /**
     * Turns on full quota accounting (every subvolume's referenced and exclusive bytes, shared
     * extents traced at every commit) for the filesystem holding {@code anyPath}. Does nothing if
     * quotas are on already, in whatever mode. On a filesystem holding data the kernel then
     * rescans it in the background.
     */
    void enableQuotas(Path anyPath);

    /** Turns quotas off and drops every qgroup with its limits. Does nothing if they are off. */
    void disableQuotas(Path anyPath);

    /** False where this implementation cannot ask for simple quotas at all (btrfs-progs before 6.7). */
    boolean canEnableSimpleQuotas();

    /**
     * Sets the limit of the subvolume at {@code subvolume}: its level-0 qgroup's {@code max_rfer}
     * and {@code max_excl}, both to {@code bytes}, replacing any earlier limit in either. Under
     * simple quotas both count the same bytes (what the subvolume wrote itself), and the kernel
     * checks each. Past it, writes into the subvolume fail with {@code EDQUOT}. Quotas must be on.
     * <p>The call is made from the subvolume's parent directory, naming the qgroup: made from the
     * subvolume itself, its transaction would be charged to that very qgroup, and a full subvolume
     * could then not get a larger limit ({@code EDQUOT}, seen on kernel 6.18). The parent must
     * therefore be on a subvolume without a limit (in the pool: the top level).
     */
    void limit(Path subvolume, long bytes);

    /** The filesystem's UUID, the name of its directory under /sys/fs/btrfs, if this implementation can tell. */
    default Optional<String> filesystemId(Path anyPath) {
        return Optional.empty();
    }

    /** Which implementation, for logs. */
    String kind();

    /** True if {@code path} is the root directory of a btrfs subvolume (not a plain directory). */
    static boolean isSubvolume(Path path) {
        try {
            if (!Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) return false;
            Object ino = Files.getAttribute(path, "unix:ino", LinkOption.NOFOLLOW_LINKS);
            return ino instanceof Long l && l == SUBVOLUME_ROOT_INODE;
        } catch (IOException e) {
            return false;
        }
    }
}
