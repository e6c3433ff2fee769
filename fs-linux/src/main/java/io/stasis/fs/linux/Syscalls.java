package io.stasis.fs.linux;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import io.stasis.host.Libc;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The Linux system calls of this module, through FFM and glibc; the only class that touches
 * {@code java.lang.foreign}. Every method throws {@link LinuxException} with the errno on failure,
 * retries {@code EINTR}, and takes {@code path} arguments as given (relative ones resolved by the
 * kernel against the directory fd). Constants are the x86_64/aarch64 generic values.
 */
public final class Syscalls {
    public static final int AT_FDCWD = -100;
    public static final int AT_SYMLINK_NOFOLLOW = 0x100;
    public static final int AT_REMOVEDIR = 0x200;
    public static final int AT_SYMLINK_FOLLOW = 0x400;
    public static final int AT_EMPTY_PATH = 0x1000;

    public static final int O_RDONLY = 0;
    public static final int O_WRONLY = 01;
    public static final int O_RDWR = 02;
    public static final int O_CREAT = 0100;
    public static final int O_EXCL = 0200;
    public static final int O_NOCTTY = 0400;
    public static final int O_TRUNC = 01000;
    public static final int O_APPEND = 02000;
    public static final int O_NONBLOCK = 04000;
    public static final int O_DIRECTORY = 0200000;
    public static final int O_NOFOLLOW = 0400000;
    public static final int O_CLOEXEC = 02000000;
    public static final int O_PATH = 010000000;
    public static final int O_TMPFILE = 020000000 | O_DIRECTORY;

    public static final long RESOLVE_NO_XDEV = 0x01;
    public static final long RESOLVE_NO_MAGICLINKS = 0x02;
    public static final long RESOLVE_NO_SYMLINKS = 0x04;
    public static final long RESOLVE_BENEATH = 0x08;
    public static final long RESOLVE_IN_ROOT = 0x10;

    public static final int RENAME_NOREPLACE = 1;
    public static final int RENAME_EXCHANGE = 2;

    public static final int SEEK_SET = 0;
    public static final int SEEK_DATA = 3;

    /** File type bits of a mode for {@link #mknodat}: a FIFO. */
    public static final int S_IFIFO = 0010000;
    /** {@code utimensat}'s "leave this time as it is". */
    public static final long UTIME_OMIT = (1L << 30) - 2;
    /** The errno of {@code getxattr} for an attribute the file does not have (not in {@link Errno}'s table). */
    public static final int ENODATA = 61;
    /** The largest value one extended attribute can have (XATTR_SIZE_MAX). */
    public static final int XATTR_SIZE_MAX = 65536;

    public static final int FALLOC_FL_KEEP_SIZE = 0x01;
    public static final int FALLOC_FL_PUNCH_HOLE = 0x02;

    /** {@code d_type} values of {@link #readDirectory}. */
    public static final int DT_UNKNOWN = 0;
    public static final int DT_DIR = 4;
    public static final int DT_REG = 8;
    public static final int DT_LNK = 10;

    /** inotify event bits and watch flags ({@code <sys/inotify.h>}). */
    public static final int IN_MODIFY = 0x2;
    public static final int IN_ATTRIB = 0x4;
    public static final int IN_CLOSE_WRITE = 0x8;
    public static final int IN_MOVED_FROM = 0x40;
    public static final int IN_MOVED_TO = 0x80;
    public static final int IN_CREATE = 0x100;
    public static final int IN_DELETE = 0x200;
    public static final int IN_DELETE_SELF = 0x400;
    public static final int IN_MOVE_SELF = 0x800;
    public static final int IN_UNMOUNT = 0x2000;
    public static final int IN_Q_OVERFLOW = 0x4000;
    public static final int IN_IGNORED = 0x8000;
    public static final int IN_ONLYDIR = 0x01000000;
    public static final int IN_DONT_FOLLOW = 0x02000000;
    public static final int IN_EXCL_UNLINK = 0x04000000;
    public static final int IN_ISDIR = 0x40000000;

    private static final long SYS_OPENAT2 = 437; // x86_64 and the generic table agree since 5.6
    private static final long SYS_PIDFD_OPEN = 434;
    private static final long SYS_PROCESS_MADVISE = 440;
    /** {@code process_madvise} advice: start reading the ranges in (swap-in, readahead). */
    public static final int MADV_WILLNEED = 3;
    /** {@code process_madvise} advice: reclaim the ranges' pages now (anonymous ones to swap). */
    public static final int MADV_PAGEOUT = 21;
    /** The most iovecs one {@code process_madvise} takes (UIO_MAXIOV). */
    public static final int MAX_IOV = 1024;
    private static final int STATX_BASIC_STATS = 0x7ff;
    private static final int PATH_MAX = 4096;


    /** struct open_how { u64 flags; u64 mode; u64 resolve; } */
    private static final StructLayout OPEN_HOW = MemoryLayout.structLayout(
            JAVA_LONG.withName("flags"), JAVA_LONG.withName("mode"), JAVA_LONG.withName("resolve"));
    /** struct statx is 256 bytes; the offsets used are in {@link #toStat}. */
    private static final long STATX_SIZE = 256;

    private static final MethodHandle SYSCALL_OPENAT2 = Libc.variadic("syscall",
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG), 1);
    private static final MethodHandle CLOSE = Libc.function("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle SYSCALL_PIDFD_OPEN = Libc.variadic("syscall",
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG), 1);
    private static final MethodHandle SYSCALL_PROCESS_MADVISE = Libc.variadic("syscall",
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_LONG), 1);
    private static final MethodHandle STATX = Libc.function("statx",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS));
    private static final MethodHandle MKDIRAT = Libc.function("mkdirat",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle UNLINKAT = Libc.function("unlinkat",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle RENAMEAT2 = Libc.function("renameat2",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle LINKAT = Libc.function("linkat",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle FCHOWN = Libc.function("fchown",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle FCHOWNAT = Libc.function("fchownat",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle FCHMOD = Libc.function("fchmod", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle FCHMODAT = Libc.function("fchmodat",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT));
    private static final MethodHandle SYMLINKAT = Libc.function("symlinkat",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS));
    private static final MethodHandle MKNODAT = Libc.function("mknodat",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG));
    private static final MethodHandle UTIMENSAT = Libc.function("utimensat",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
    private static final MethodHandle LSETXATTR = Libc.function("lsetxattr",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT));
    private static final MethodHandle LGETXATTR = Libc.function("lgetxattr",
            FunctionDescriptor.of(JAVA_LONG, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG));
    private static final MethodHandle LLISTXATTR = Libc.function("llistxattr",
            FunctionDescriptor.of(JAVA_LONG, ADDRESS, ADDRESS, JAVA_LONG));
    private static final MethodHandle READLINKAT = Libc.function("readlinkat",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG));
    private static final MethodHandle GETDENTS64 = Libc.function("getdents64",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle LSEEK = Libc.function("lseek",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT));
    private static final MethodHandle PREAD = Libc.function("pread64",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle READ = Libc.function("read",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle WRITE = Libc.function("write",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle FTRUNCATE = Libc.function("ftruncate64",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG));
    private static final MethodHandle FSYNC = Libc.function("fsync", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle FALLOCATE = Libc.function("fallocate",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle INOTIFY_INIT1 = Libc.function("inotify_init1", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle INOTIFY_ADD_WATCH = Libc.function("inotify_add_watch",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle INOTIFY_RM_WATCH = Libc.function("inotify_rm_watch",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle EVENTFD = Libc.function("eventfd", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    private static final MethodHandle POLL = Libc.function("poll", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));

    /** {@code struct inotify_event} header: {@code int wd; u32 mask; u32 cookie; u32 len;}, then {@code len} bytes of name. */
    private static final int INOTIFY_EVENT_HEADER = 16;
    /** Room for many events per read; one event needs at most 16 + NAME_MAX + 1 bytes. */
    private static final int INOTIFY_READ_BUFFER = 64 * 1024;
    private static final short POLLIN = 0x1;
    private static final short POLL_READY = 0x1 | 0x8 | 0x10 | 0x20; // POLLIN | POLLERR | POLLHUP | POLLNVAL

    private Syscalls() {
    }

    /** One entry of a directory: its name and its {@code d_type} ({@link #DT_UNKNOWN} when the filesystem does not say). */
    public record DirEntry(String name, int type) {
    }

    /**
     * One {@code struct inotify_event}.
     *
     * @param wd     the watch it came from, -1 for {@link #IN_Q_OVERFLOW}
     * @param cookie ties an {@link #IN_MOVED_FROM} to its {@link #IN_MOVED_TO}
     * @param name   the entry in the watched directory (decoded as UTF-8), empty for events on the directory itself
     */
    public record InotifyEvent(int wd, int mask, int cookie, String name) {
        public boolean has(int bits) {
            return (mask & bits) != 0;
        }
    }

    /**
     * {@code openat2(dirfd, path, {flags, mode, resolve})}. {@code mode} must be 0 unless
     * {@code flags} has {@code O_CREAT} or {@code O_TMPFILE}. {@code EAGAIN}, which the kernel
     * returns for {@code RESOLVE_IN_ROOT}/{@code RESOLVE_BENEATH} when a concurrent rename or
     * mount might have let {@code ..} escape, is retried.
     */
    public static int openat2(int dirfd, String path, int flags, int mode, long resolve) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment how = arena.allocate(OPEN_HOW);
            how.set(JAVA_LONG, 0, Integer.toUnsignedLong(flags));
            how.set(JAVA_LONG, 8, Integer.toUnsignedLong(mode));
            how.set(JAVA_LONG, 16, resolve);
            MemorySegment p = arena.allocateFrom(path);
            MemorySegment state = arena.allocate(Libc.CALL_STATE);
            for (int attempt = 0; ; attempt++) {
                long fd = Libc.restarting("openat2", state,
                        () -> (long) SYSCALL_OPENAT2.invokeExact(state, SYS_OPENAT2, (long) dirfd, p, how, OPEN_HOW.byteSize()));
                if (fd >= 0) return (int) fd;
                if (-fd != Errno.EAGAIN || attempt >= 1000) throw new LinuxException((int) -fd, "openat2", path);
            }
        }
    }

    /** Opens a trusted host path, following symlinks as usual (no confinement). */
    public static int open(String hostPath, int flags) {
        return openat2(AT_FDCWD, hostPath, flags, 0, 0);
    }

    /** Closes an fd. Never retried: on Linux the fd is gone even when close reports EINTR. */
    public static void close(int fd) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Libc.CALL_STATE);
            long r = Libc.once("close", () -> (int) CLOSE.invokeExact(state, fd));
            if (r < 0 && Libc.errno(state) != Errno.EINTR) throw new LinuxException(Libc.errno(state), "close", "fd " + fd);
        }
    }

    /** {@code statx(dirfd, path, flags, STATX_BASIC_STATS)}; flags e.g. {@link #AT_SYMLINK_NOFOLLOW}. */
    public static Stat statx(int dirfd, String path, int flags) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocateFrom(path);
            MemorySegment buf = arena.allocate(STATX_SIZE, 8);
            call(arena, "statx", path, s -> (int) STATX.invokeExact(s, dirfd, p, flags, STATX_BASIC_STATS, buf));
            return toStat(buf);
        }
    }

    /** The inode an fd refers to (works on {@code O_PATH} fds). */
    public static Stat fstat(int fd) {
        return statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
    }

    public static void mkdirat(int dirfd, String path, int mode) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocateFrom(path);
            call(arena, "mkdirat", path, s -> (int) MKDIRAT.invokeExact(s, dirfd, p, mode));
        }
    }

    /** Removes a name; with {@link #AT_REMOVEDIR} an empty directory. Never follows a symlink. */
    public static void unlinkat(int dirfd, String path, int flags) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocateFrom(path);
            call(arena, "unlinkat", path, s -> (int) UNLINKAT.invokeExact(s, dirfd, p, flags));
        }
    }

    /** Renames; flags {@link #RENAME_NOREPLACE} or {@link #RENAME_EXCHANGE}, or 0 to replace. */
    public static void renameat2(int oldDirfd, String oldPath, int newDirfd, String newPath, int flags) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment from = arena.allocateFrom(oldPath);
            MemorySegment to = arena.allocateFrom(newPath);
            call(arena, "renameat2", oldPath + " -> " + newPath,
                    s -> (int) RENAMEAT2.invokeExact(s, oldDirfd, from, newDirfd, to, flags));
        }
    }

    public static void linkat(int oldDirfd, String oldPath, int newDirfd, String newPath, int flags) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment from = arena.allocateFrom(oldPath);
            MemorySegment to = arena.allocateFrom(newPath);
            call(arena, "linkat", oldPath + " -> " + newPath,
                    s -> (int) LINKAT.invokeExact(s, oldDirfd, from, newDirfd, to, flags));
        }
    }

    public static void fchown(int fd, int uid, int gid) {
        try (Arena arena = Arena.ofConfined()) {
            call(arena, "fchown", "fd " + fd, s -> (int) FCHOWN.invokeExact(s, fd, uid, gid));
        }
    }

    /** Changes owners of a name; with {@link #AT_SYMLINK_NOFOLLOW} a symlink itself. */
    public static void fchownat(int dirfd, String path, int uid, int gid, int flags) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocateFrom(path);
            call(arena, "fchownat", path, s -> (int) FCHOWNAT.invokeExact(s, dirfd, p, uid, gid, flags));
        }
    }

    public static void fchmod(int fd, int mode) {
        try (Arena arena = Arena.ofConfined()) {
            call(arena, "fchmod", "fd " + fd, s -> (int) FCHMOD.invokeExact(s, fd, mode));
        }
    }

    /** Changes permission bits of a name; {@code flags} 0 (Linux refuses AT_SYMLINK_NOFOLLOW here), so pass a path that is no symlink. */
    public static void fchmodat(int dirfd, String path, int mode, int flags) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocateFrom(path);
            call(arena, "fchmodat", path, s -> (int) FCHMODAT.invokeExact(s, dirfd, p, mode, flags));
        }
    }

    /** Creates the symlink {@code linkPath} (in {@code newDirfd}) holding {@code target} as given; never follows an existing name. */
    public static void symlinkat(String target, int newDirfd, String linkPath) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment t = arena.allocateFrom(target);
            MemorySegment p = arena.allocateFrom(linkPath);
            call(arena, "symlinkat", linkPath + " -> " + target, s -> (int) SYMLINKAT.invokeExact(s, t, newDirfd, p));
        }
    }

    /** Creates a special file; {@code mode} holds its type (e.g. {@link #S_IFIFO}) and permission bits, which the umask narrows. */
    public static void mknodat(int dirfd, String path, int mode, long device) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocateFrom(path);
            call(arena, "mknodat", path, s -> (int) MKNODAT.invokeExact(s, dirfd, p, mode, device));
        }
    }

    /**
     * Sets the access and modification times of a name; with {@link #AT_SYMLINK_NOFOLLOW} those of
     * a symlink itself. A null time is left as it is ({@link #UTIME_OMIT}).
     */
    public static void utimensat(int dirfd, String path, Instant atime, Instant mtime, int flags) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocateFrom(path);
            MemorySegment times = arena.allocate(32, 8); // struct timespec[2] { s64 tv_sec; s64 tv_nsec; }
            int i = 0;
            for (Instant t : new Instant[] {atime, mtime}) {
                times.set(JAVA_LONG, 16L * i, t == null ? 0 : t.getEpochSecond());
                times.set(JAVA_LONG, 16L * i + 8, t == null ? UTIME_OMIT : t.getNano());
                i++;
            }
            call(arena, "utimensat", path, s -> (int) UTIMENSAT.invokeExact(s, dirfd, p, times, flags));
        }
    }

    /**
     * Sets an extended attribute of what {@code path} names without following a final symlink
     * ({@code lsetxattr}); {@code flags} 0 creates or replaces. Pass {@code /proc/self/fd/N/name}
     * with N a confined directory fd to stay below it.
     */
    public static void lsetxattr(String path, String name, byte[] value, int flags) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocateFrom(path);
            MemorySegment n = arena.allocateFrom(name);
            MemorySegment v = arena.allocate(Math.max(1, value.length));
            MemorySegment.copy(value, 0, v, JAVA_BYTE, 0, value.length);
            call(arena, "lsetxattr", path + " " + name, s -> (int) LSETXATTR.invokeExact(s, p, n, v, (long) value.length, flags));
        }
    }

    /** The value of an extended attribute ({@code lgetxattr}: a final symlink is not followed); {@link #ENODATA} when absent. */
    public static byte[] lgetxattr(String path, String name) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocateFrom(path);
            MemorySegment n = arena.allocateFrom(name);
            MemorySegment v = arena.allocate(XATTR_SIZE_MAX);
            long size = call(arena, "lgetxattr", path + " " + name, s -> (long) LGETXATTR.invokeExact(s, p, n, v, (long) XATTR_SIZE_MAX));
            return v.asSlice(0, size).toArray(JAVA_BYTE);
        }
    }

    /** The names of the extended attributes of what {@code path} names ({@code llistxattr}: a final symlink is not followed). */
    public static List<String> llistxattr(String path) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocateFrom(path);
            long size = call(arena, "llistxattr", path, s -> (long) LLISTXATTR.invokeExact(s, p, MemorySegment.NULL, 0L));
            if (size == 0) return List.of();
            MemorySegment buf = arena.allocate(size + 64); // room for one added meanwhile; ERANGE if more
            long n = call(arena, "llistxattr", path, s -> (long) LLISTXATTR.invokeExact(s, p, buf, buf.byteSize()));
            var names = new ArrayList<String>();
            for (long at = 0; at < n; ) {
                String name = buf.getString(at, StandardCharsets.UTF_8);
                names.add(name);
                at += name.getBytes(StandardCharsets.UTF_8).length + 1;
            }
            return names;
        }
    }

    /** The target of a symlink, as written (bytes decoded as UTF-8). */
    public static String readlinkat(int dirfd, String path) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocateFrom(path);
            MemorySegment buf = arena.allocate(PATH_MAX + 1);
            long n = call(arena, "readlinkat", path,
                    s -> (long) READLINKAT.invokeExact(s, dirfd, p, buf, buf.byteSize()));
            if (n > PATH_MAX) throw new LinuxException(Errno.ENAMETOOLONG, "readlinkat", path);
            return new String(buf.asSlice(0, n).toArray(JAVA_BYTE), StandardCharsets.UTF_8);
        }
    }

    /**
     * Reads the entries of a directory fd (opened for reading, not {@code O_PATH}) from its current
     * position to the end, without {@code .} and {@code ..}. {@link #lseek} to 0 to read again.
     */
    public static List<DirEntry> readDirectory(int fd) {
        var entries = new ArrayList<DirEntry>();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(32 * 1024, 8);
            while (true) {
                long n = call(arena, "getdents64", "fd " + fd, s -> (long) GETDENTS64.invokeExact(s, fd, buf, buf.byteSize()));
                if (n == 0) return entries;
                // struct linux_dirent64 { u64 d_ino; s64 d_off; u16 d_reclen; u8 d_type; char d_name[]; }
                for (long at = 0; at < n; ) {
                    int reclen = Short.toUnsignedInt(buf.get(JAVA_SHORT, at + 16));
                    int type = Byte.toUnsignedInt(buf.get(JAVA_BYTE, at + 18));
                    String name = buf.getString(at + 19, StandardCharsets.UTF_8);
                    if (!name.equals(".") && !name.equals("..")) entries.add(new DirEntry(name, type));
                    at += reclen;
                }
            }
        }
    }

    public static long lseek(int fd, long offset, int whence) {
        try (Arena arena = Arena.ofConfined()) {
            return call(arena, "lseek", "fd " + fd, s -> (long) LSEEK.invokeExact(s, fd, offset, whence));
        }
    }

    /** Reads up to {@code len} bytes at {@code position} into {@code dst}; returns the count, 0 at end of file. */
    public static int pread(int fd, byte[] dst, int off, int len, long position) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(Math.max(1, len));
            long n = call(arena, "pread", "fd " + fd, s -> (long) PREAD.invokeExact(s, fd, buf, (long) len, position));
            MemorySegment.copy(buf, JAVA_BYTE, 0, dst, off, (int) n);
            return (int) n;
        }
    }

    /** Reads up to {@code len} bytes; returns the count, 0 at end of file. */
    public static int read(int fd, byte[] dst, int off, int len) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(Math.max(1, len));
            long n = call(arena, "read", "fd " + fd, s -> (long) READ.invokeExact(s, fd, buf, (long) len));
            MemorySegment.copy(buf, JAVA_BYTE, 0, dst, off, (int) n);
            return (int) n;
        }
    }

    /** Writes all {@code len} bytes (looping over short writes). */
    public static void write(int fd, byte[] src, int off, int len) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(Math.max(1, len));
            MemorySegment.copy(src, off, buf, JAVA_BYTE, 0, len);
            for (long done = 0; done < len; ) {
                MemorySegment rest = buf.asSlice(done);
                long remaining = len - done;
                done += call(arena, "write", "fd " + fd, s -> (long) WRITE.invokeExact(s, fd, rest, remaining));
            }
        }
    }

    public static void ftruncate(int fd, long length) {
        try (Arena arena = Arena.ofConfined()) {
            call(arena, "ftruncate", "fd " + fd, s -> (int) FTRUNCATE.invokeExact(s, fd, length));
        }
    }

    public static void fallocate(int fd, int mode, long offset, long length) {
        try (Arena arena = Arena.ofConfined()) {
            call(arena, "fallocate", "fd " + fd, s -> (int) FALLOCATE.invokeExact(s, fd, mode, offset, length));
        }
    }

    public static void fsync(int fd) {
        try (Arena arena = Arena.ofConfined()) {
            call(arena, "fsync", "fd " + fd, s -> (int) FSYNC.invokeExact(s, fd));
        }
    }

    /** A new inotify instance, non-blocking and close-on-exec. */
    public static int inotifyInit() {
        try (Arena arena = Arena.ofConfined()) {
            return (int) call(arena, "inotify_init1", "-", s -> (int) INOTIFY_INIT1.invokeExact(s, O_NONBLOCK | O_CLOEXEC));
        }
    }

    /**
     * {@code inotify_add_watch}; returns the watch descriptor, the same one again for an inode
     * this instance already watches. {@code path} should be a {@code /proc/self/fd/N} link of an
     * fd opened confined (the link must be followed, so no {@link #IN_DONT_FOLLOW} with it).
     */
    public static int inotifyAddWatch(int inotifyFd, String path, int mask) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocateFrom(path);
            return (int) call(arena, "inotify_add_watch", path, s -> (int) INOTIFY_ADD_WATCH.invokeExact(s, inotifyFd, p, mask));
        }
    }

    /** {@code inotify_rm_watch}; EINVAL when the kernel already dropped the watch. */
    public static void inotifyRemoveWatch(int inotifyFd, int wd) {
        try (Arena arena = Arena.ofConfined()) {
            call(arena, "inotify_rm_watch", "wd " + wd, s -> (int) INOTIFY_RM_WATCH.invokeExact(s, inotifyFd, wd));
        }
    }

    /**
     * Reads what an inotify fd (non-blocking) has queued, up to one buffer of 64 KiB; an empty
     * list when nothing is queued. Call again until empty to drain it.
     */
    public static List<InotifyEvent> readInotifyEvents(int inotifyFd) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(INOTIFY_READ_BUFFER, 8);
            MemorySegment state = arena.allocate(Libc.CALL_STATE);
            long n = Libc.restarting("read", state, () -> (long) READ.invokeExact(state, inotifyFd, buf, buf.byteSize()));
            if (n == -Errno.EAGAIN) return List.of();
            if (n < 0) throw new LinuxException((int) -n, "read", "inotify fd " + inotifyFd);
            var events = new ArrayList<InotifyEvent>();
            for (long at = 0; at + INOTIFY_EVENT_HEADER <= n; ) {
                int wd = buf.get(JAVA_INT, at);
                int mask = buf.get(JAVA_INT, at + 4);
                int cookie = buf.get(JAVA_INT, at + 8);
                int len = buf.get(JAVA_INT, at + 12);
                // the name is NUL-padded to len bytes; len 0 means no name (the next event starts here)
                String name = len == 0 ? "" : buf.asSlice(at + INOTIFY_EVENT_HEADER, len).getString(0, StandardCharsets.UTF_8);
                events.add(new InotifyEvent(wd, mask, cookie, name));
                at += INOTIFY_EVENT_HEADER + Integer.toUnsignedLong(len);
            }
            return events;
        }
    }

    /** An eventfd (counter 0), non-blocking and close-on-exec: a way to wake a thread in {@link #pollReadable}. */
    public static int eventfd() {
        try (Arena arena = Arena.ofConfined()) {
            return (int) call(arena, "eventfd", "-", s -> (int) EVENTFD.invokeExact(s, 0, O_NONBLOCK | O_CLOEXEC));
        }
    }

    /** Adds 1 to an eventfd's counter, making it readable; a full counter (EAGAIN) is readable already. */
    public static void signalEventfd(int fd) {
        byte[] one = {1, 0, 0, 0, 0, 0, 0, 0}; // a little-endian u64 (x86_64, aarch64)
        try {
            write(fd, one, 0, one.length);
        } catch (LinuxException e) {
            if (!e.is(Errno.EAGAIN)) throw e;
        }
    }

    /**
     * Waits until one of {@code fds} is readable (or in error), at most {@code timeoutMillis}
     * (-1: no limit). Returns a bit mask: bit {@code i} set when {@code fds[i]} is ready; 0 on timeout.
     * An interrupted wait (EINTR) returns 0 too, so callers recompute their deadlines.
     */
    public static int pollReadable(int timeoutMillis, int... fds) {
        if (fds.length > 31) throw new IllegalArgumentException("at most 31 fds");
        try (Arena arena = Arena.ofConfined()) {
            // struct pollfd { int fd; short events; short revents; }
            MemorySegment pollfds = arena.allocate(8L * fds.length, 4);
            for (int i = 0; i < fds.length; i++) {
                pollfds.set(JAVA_INT, 8L * i, fds[i]);
                pollfds.set(JAVA_SHORT, 8L * i + 4, POLLIN);
            }
            MemorySegment state = arena.allocate(Libc.CALL_STATE);
            long r = Libc.once("poll", () -> (int) POLL.invokeExact(state, pollfds, (long) fds.length, timeoutMillis));
            if (r < 0) {
                if (Libc.errno(state) == Errno.EINTR) return 0;
                throw new LinuxException(Libc.errno(state), "poll", "-");
            }
            int ready = 0;
            for (int i = 0; i < fds.length; i++) {
                if ((pollfds.get(JAVA_SHORT, 8L * i + 6) & POLL_READY) != 0) ready |= 1 << i;
            }
            return ready;
        }
    }

    /** {@code pidfd_open(pid, 0)}: a file descriptor that refers to that process (close it with {@link #close}). */
    public static int pidfdOpen(long pid) {
        try (Arena arena = Arena.ofConfined()) {
            return (int) call(arena, "pidfd_open", Long.toString(pid),
                    s -> (long) SYSCALL_PIDFD_OPEN.invokeExact(s, SYS_PIDFD_OPEN, pid, 0L));
        }
    }

    /**
     * {@code process_madvise(pidfd, ranges, advice, 0)} on another process's memory: {@code ranges}
     * holds start and length pairs, at most {@link #MAX_IOV} of them. Returns the bytes advised,
     * which can be fewer than asked when a range is gone meanwhile.
     */
    public static long processMadvise(int pidfd, long[] ranges, int advice) {
        int count = ranges.length / 2;
        if (count == 0) return 0;
        if (count > MAX_IOV || ranges.length % 2 != 0) throw new IllegalArgumentException("1 to " + MAX_IOV + " start/length pairs");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment iov = arena.allocate(16L * count, 8); // struct iovec { void *base; size_t len; }
            for (int i = 0; i < ranges.length; i++) iov.set(JAVA_LONG, 8L * i, ranges[i]);
            return call(arena, "process_madvise", "pidfd " + pidfd,
                    s -> (long) SYSCALL_PROCESS_MADVISE.invokeExact(s, SYS_PROCESS_MADVISE, (long) pidfd, iov, (long) count,
                            (long) advice, 0L));
        }
    }

    // ---------------------------------------------------------------------------------------

    /** A native call given the errno capture segment; returns the raw result (negative on failure). */
    @FunctionalInterface
    private interface NativeCall {
        long invoke(MemorySegment callState) throws Throwable;
    }

    /** Runs a call, retrying EINTR; a negative result becomes a {@link LinuxException}. */
    private static long call(Arena arena, String syscall, String path, NativeCall call) {
        MemorySegment state = arena.allocate(Libc.CALL_STATE);
        long r = Libc.restarting(syscall, state, () -> call.invoke(state));
        if (r < 0) throw new LinuxException((int) -r, syscall, path);
        return r;
    }

    private static Stat toStat(MemorySegment b) {
        int nlink = b.get(JAVA_INT, 16);
        int uid = b.get(JAVA_INT, 20);
        int gid = b.get(JAVA_INT, 24);
        int mode = Short.toUnsignedInt(b.get(JAVA_SHORT, 28));
        long ino = b.get(JAVA_LONG, 32);
        long size = b.get(JAVA_LONG, 40);
        long mtimeSec = b.get(JAVA_LONG, 112);
        int mtimeNsec = b.get(JAVA_INT, 120);
        long dev = ((long) b.get(JAVA_INT, 136) << 32) | Integer.toUnsignedLong(b.get(JAVA_INT, 140));
        return new Stat(mode, uid, gid, size, ino, dev, nlink, Instant.ofEpochSecond(mtimeSec, mtimeNsec));
    }
}
