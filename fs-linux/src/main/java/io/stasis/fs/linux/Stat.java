package io.stasis.fs.linux;

import java.time.Instant;

/**
 * What {@code statx} says about one inode.
 *
 * @param mode  file type and permission bits, as in {@code st_mode}
 * @param size  bytes; for a symlink the length of its target
 * @param inode inode number, with {@code device} identifying the inode on the host
 */
public record Stat(int mode, int uid, int gid, long size, long inode, long device, int links, Instant mtime) {
    static final int S_IFMT = 0170000;
    static final int S_IFSOCK = 0140000;
    static final int S_IFLNK = 0120000;
    static final int S_IFREG = 0100000;
    static final int S_IFDIR = 0040000;

    public boolean isRegularFile() {
        return (mode & S_IFMT) == S_IFREG;
    }

    public boolean isDirectory() {
        return (mode & S_IFMT) == S_IFDIR;
    }

    public boolean isSymlink() {
        return (mode & S_IFMT) == S_IFLNK;
    }

    public boolean isFifo() {
        return (mode & 0170000) == 0010000;
    }

    public boolean isSocket() {
        return (mode & S_IFMT) == S_IFSOCK;
    }

    /** Permission bits with setuid, setgid and sticky, e.g. {@code 0644}. */
    public int permissions() {
        return mode & 07777;
    }

    /** Whether both name the same inode. */
    public boolean sameInode(Stat other) {
        return inode == other.inode && device == other.device;
    }
}
