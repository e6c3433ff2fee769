package io.stasis.storage.btrfs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.host.Libc;
import io.stasis.host.OffCarrier;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Subvolume create, snapshot and delete, quotas and subvolume limits through the btrfs ioctls
 * (linux/btrfs.h), called with the FFM API: the same kernel calls the {@code btrfs} CLI makes,
 * without spawning a process per sandbox. All native code of this module is in this class. Each
 * call runs {@linkplain OffCarrier off the virtual threads' carriers}: one that commits a
 * transaction blocks for tens of milliseconds when the host is busy.
 *
 * <p>Struct layouts, x86_64 and every other 64-bit Linux alike:
 * <pre>
 * struct btrfs_ioctl_vol_args    { __s64 fd; char name[4088]; }                       // 4096 bytes
 * struct btrfs_ioctl_vol_args_v2 { __s64 fd; __u64 transid; __u64 flags;
 *                                  union { ...; __u64 unused[4]; }; char name[4040]; } // 4096 bytes
 * struct btrfs_ioctl_quota_ctl_args { __u64 cmd; __u64 status; }                      // 16 bytes
 * struct btrfs_ioctl_qgroup_limit_args { __u64 qgroupid;
 *     struct btrfs_qgroup_limit { __u64 flags, max_rfer, max_excl, rsv_rfer, rsv_excl; } lim; } // 48 bytes
 * struct btrfs_ioctl_fs_info_args { __u64 max_id; __u64 num_devices; __u8 fsid[16]; ... } // 1024 bytes
 * struct btrfs_ioctl_ino_lookup_args { __u64 treeid; __u64 objectid; char name[4080]; } // 4096 bytes
 * struct btrfs_ioctl_qgroup_assign_args { __u64 assign; __u64 src; __u64 dst; }       // 24 bytes
 * struct btrfs_ioctl_qgroup_create_args { __u64 create; __u64 qgroupid; }            // 16 bytes
 * struct btrfs_ioctl_search_args { struct btrfs_ioctl_search_key {                    // 4096 bytes
 *     __u64 tree_id, min_objectid, max_objectid, min_offset, max_offset, min_transid, max_transid;
 *     __u32 min_type, max_type, nr_items, unused; __u64 unused1..4; } key;            // 104 bytes
 *   char buf[3992]; }   // nr_items results: { __u64 transid, objectid, offset; __u32 type, len; } then len bytes
 * </pre>
 */
final class BtrfsIoctl implements Subvolumes, Qgroups {
    private static final Logger log = LoggerFactory.getLogger(BtrfsIoctl.class);

    private static final long ARGS_SIZE = 4096;
    private static final long V1_NAME_OFFSET = 8;
    private static final long V2_FLAGS_OFFSET = 16;
    private static final long V2_NAME_OFFSET = 56;
    /** BTRFS_SUBVOL_NAME_MAX: longer names are refused by the kernel anyway. */
    private static final int NAME_MAX = 4039;
    private static final long BTRFS_SUBVOL_RDONLY = 1L << 1;

    private static final long BTRFS_IOC_SUBVOL_CREATE = iow(14, ARGS_SIZE);
    private static final long BTRFS_IOC_SNAP_DESTROY = iow(15, ARGS_SIZE);
    private static final long BTRFS_IOC_SNAP_CREATE_V2 = iow(23, ARGS_SIZE);
    /** _IO(BTRFS_IOCTL_MAGIC, 8): no argument. */
    private static final long BTRFS_IOC_SYNC = (0x94L << 8) | 8;
    private static final long QUOTA_CTL_ARGS_SIZE = 16;
    private static final long QGROUP_LIMIT_ARGS_SIZE = 48;
    private static final long FS_INFO_ARGS_SIZE = 1024;
    private static final long FS_INFO_FSID_OFFSET = 16;
    private static final long BTRFS_IOC_QUOTA_CTL = iowr(40, QUOTA_CTL_ARGS_SIZE);
    private static final long BTRFS_IOC_QGROUP_LIMIT = ior(43, QGROUP_LIMIT_ARGS_SIZE);
    private static final long BTRFS_IOC_FS_INFO = ior(31, FS_INFO_ARGS_SIZE);
    private static final long BTRFS_IOC_INO_LOOKUP = iowr(18, ARGS_SIZE);
    private static final long BTRFS_IOC_QGROUP_ASSIGN = iow(41, 24);
    private static final long BTRFS_IOC_QGROUP_CREATE = iow(42, 16);
    private static final long BTRFS_IOC_TREE_SEARCH = iowr(17, ARGS_SIZE);
    /** The quota tree, and the key type of its member-of items (one per direction: child to parent, parent to child). */
    private static final long BTRFS_QUOTA_TREE_OBJECTID = 8;
    private static final int BTRFS_QGROUP_RELATION_KEY = 246;
    private static final long SEARCH_KEY_SIZE = 104;
    private static final long SEARCH_HEADER_SIZE = 32;
    private static final long BTRFS_QUOTA_CTL_ENABLE = 1;
    private static final long BTRFS_QUOTA_CTL_DISABLE = 2;
    private static final long BTRFS_QUOTA_CTL_ENABLE_SIMPLE_QUOTA = 4;
    private static final long BTRFS_QGROUP_LIMIT_MAX_RFER = 1;
    private static final long BTRFS_QGROUP_LIMIT_MAX_EXCL = 2;

    private static final int O_RDONLY = 0;
    private static final int O_DIRECTORY = 0x10000;
    private static final int O_CLOEXEC = 0x80000;
    private static final int ENOENT = 2;
    private static final int EEXIST = 17;
    private static final int EINVAL = 22;
    private static final int ENOTEMPTY = 39;
    private static final int ENOTCONN = 107;

    private final MethodHandle open;
    private final MethodHandle ioctl;
    private final MethodHandle close;

    private BtrfsIoctl(MethodHandle open, MethodHandle ioctl, MethodHandle close) {
        this.open = open;
        this.ioctl = ioctl;
        this.close = close;
    }

    /**
     * Links the libc functions; empty (and the caller uses the CLI) where native access is not
     * allowed, e.g. under {@code --illegal-native-access=deny} without {@code --enable-native-access}.
     */
    static Optional<BtrfsIoctl> load() {
        try {
            // open(2) and ioctl(2) are variadic in C.
            return Optional.of(new BtrfsIoctl(Libc.variadic("open", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT), 2),
                    Libc.variadic("ioctl", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS), 2),
                    Libc.function("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT))));
        } catch (RuntimeException | LinkageError e) {
            log.atWarn().setCause(e).log("btrfs ioctls unavailable (native access?); using the btrfs CLI");
            return Optional.empty();
        }
    }

    @Override
    public String kind() {
        return "ioctl";
    }

    @Override
    public void create(Path path) {
        nameCall(path, BTRFS_IOC_SUBVOL_CREATE, "btrfs subvolume create");
    }

    @Override
    public void snapshot(Path source, Path target, boolean readOnly) {
        String step = "btrfs subvolume snapshot";
        inArena(arena -> {
            int sourceFd = openDirectory(arena, source, step);
            try {
                int parent = openDirectory(arena, target.toAbsolutePath().getParent(), step);
                try {
                    MemorySegment args = arena.allocate(ARGS_SIZE, 8);
                    args.set(JAVA_LONG, 0, sourceFd);
                    args.set(JAVA_LONG, V2_FLAGS_OFFSET, readOnly ? BTRFS_SUBVOL_RDONLY : 0L);
                    putName(args, V2_NAME_OFFSET, target, step);
                    call(arena, parent, BTRFS_IOC_SNAP_CREATE_V2, args, step, target);
                } finally {
                    closeQuietly(parent);
                }
            } finally {
                closeQuietly(sourceFd);
            }
        });
    }

    @Override
    public void delete(Path path) {
        nameCall(path, BTRFS_IOC_SNAP_DESTROY, "btrfs subvolume delete");
    }

    /** {@code request} on {@code path}'s parent directory, its argument {@code path}'s name ({@code struct btrfs_ioctl_vol_args}). */
    private void nameCall(Path path, long request, String step) {
        inArena(arena -> {
            int parent = openDirectory(arena, path.toAbsolutePath().getParent(), step);
            try {
                MemorySegment args = arena.allocate(ARGS_SIZE, 8);
                putName(args, V1_NAME_OFFSET, path, step);
                call(arena, parent, request, args, step, path);
            } finally {
                closeQuietly(parent);
            }
        });
    }

    /** Work on the memory of one call, which {@link #inArena} frees after it. */
    @FunctionalInterface
    private interface ArenaWork<T> {
        T run(Arena arena);
    }

    /** {@link ArenaWork} without a result. */
    @FunctionalInterface
    private interface ArenaAction {
        void run(Arena arena);
    }

    /**
     * Runs {@code work} with a confined arena of its own, {@linkplain OffCarrier off the virtual
     * threads' carriers} (the class comment says why): every call of this class goes through here.
     */
    private static <T> T inArena(ArenaWork<T> work) {
        return OffCarrier.call(() -> {
            try (Arena arena = Arena.ofConfined()) {
                return work.run(arena);
            }
        });
    }

    /** {@link #inArena(ArenaWork)} for work without a result. */
    private static void inArena(ArenaAction action) {
        inArena(arena -> {
            action.run(arena);
            return null;
        });
    }

    @Override
    public void sync(Path anyPath) {
        String step = "btrfs filesystem sync";
        inArena(arena -> {
            int fd = openDirectory(arena, anyPath, step);
            try {
                call(arena, fd, BTRFS_IOC_SYNC, MemorySegment.NULL, step, anyPath);
            } finally {
                closeQuietly(fd);
            }
        });
    }

    /**
     * {@inheritDoc}
     * <p>{@code BTRFS_IOC_QUOTA_CTL} with {@code BTRFS_QUOTA_CTL_ENABLE_SIMPLE_QUOTA}, which
     * btrfs-progs before 6.7 cannot send; the kernel returns at once when quotas are on already.
     */
    @Override
    public void enableSimpleQuotas(Path anyPath) {
        quotaControl(anyPath, BTRFS_QUOTA_CTL_ENABLE_SIMPLE_QUOTA, "btrfs quota enable --simple");
    }

    /**
     * {@inheritDoc}
     * <p>{@code BTRFS_IOC_QUOTA_CTL} with {@code BTRFS_QUOTA_CTL_ENABLE}: the kernel returns at
     * once when quotas are on already (in whichever mode), and otherwise creates a qgroup for
     * every subvolume and starts a rescan in the background.
     */
    @Override
    public void enableQuotas(Path anyPath) {
        quotaControl(anyPath, BTRFS_QUOTA_CTL_ENABLE, "btrfs quota enable");
    }

    /** {@inheritDoc} <p>{@code BTRFS_IOC_QUOTA_CTL} with {@code BTRFS_QUOTA_CTL_DISABLE}. */
    @Override
    public void disableQuotas(Path anyPath) {
        quotaControl(anyPath, BTRFS_QUOTA_CTL_DISABLE, "btrfs quota disable");
    }

    /** The kernel decides: {@link #enableSimpleQuotas} fails with {@code EINVAL} where it cannot. */
    @Override
    public boolean canEnableSimpleQuotas() {
        return true;
    }

    private void quotaControl(Path anyPath, long command, String step) {
        inArena(arena -> {
            int fd = openDirectory(arena, anyPath, step);
            try {
                MemorySegment args = arena.allocate(QUOTA_CTL_ARGS_SIZE, 8);
                args.set(JAVA_LONG, 0, command);
                call(arena, fd, BTRFS_IOC_QUOTA_CTL, args, step, anyPath);
            } finally {
                closeQuietly(fd);
            }
        });
    }

    /**
     * {@inheritDoc}
     * <p>{@code BTRFS_IOC_INO_LOOKUP} on the subvolume (tree id 0, object id 256: "the subvolume
     * this directory is the root of") gives its id, which is its level-0 qgroup's id; then
     * {@code BTRFS_IOC_QGROUP_LIMIT} on the parent directory with that qgroup id and both limit
     * flags. No limit is cleared on the way: on kernel 6.18 the documented "clear" value (-1) left
     * a limit of 0 behind.
     */
    @Override
    public void limit(Path subvolume, long bytes) {
        String step = "btrfs qgroup limit";
        if (bytes <= 0) throw failure(step, subvolume, "the limit must be positive, was " + bytes, -1, null);
        inArena(arena -> {
            limitGroup(arena, subvolume.toAbsolutePath().getParent(), subvolumeId(arena, subvolume, step), bytes, subvolume);
        });
    }

    @Override
    public long subvolumeId(Path subvolume) {
        return inArena(arena -> {
            return subvolumeId(arena, subvolume, "btrfs inspect-internal rootid");
        });
    }

    /** {@inheritDoc} <p>{@code BTRFS_IOC_QGROUP_CREATE}; {@code EEXIST} is success. */
    @Override
    public void create(Path pool, Qgroup group) {
        groupCall(pool, BTRFS_IOC_QGROUP_CREATE, "btrfs qgroup create " + group, EEXIST, 1, group.packed());
    }

    /** {@inheritDoc} <p>{@code BTRFS_IOC_QGROUP_CREATE} with create 0; {@code ENOENT} is success. */
    @Override
    public void destroy(Path pool, Qgroup group) {
        groupCall(pool, BTRFS_IOC_QGROUP_CREATE, "btrfs qgroup destroy " + group, ENOENT, 0, group.packed());
    }

    /** {@inheritDoc} <p>{@code BTRFS_IOC_QGROUP_ASSIGN}; {@code EEXIST} is success. */
    @Override
    public void assign(Path pool, Qgroup member, Qgroup parent) {
        groupCall(pool, BTRFS_IOC_QGROUP_ASSIGN, "btrfs qgroup assign " + member + " " + parent, EEXIST, 1, member.packed(), parent.packed());
    }

    /** {@inheritDoc} <p>{@code BTRFS_IOC_QGROUP_ASSIGN} with assign 0; {@code ENOENT} is success. */
    @Override
    public void unassign(Path pool, Qgroup member, Qgroup parent) {
        groupCall(pool, BTRFS_IOC_QGROUP_ASSIGN, "btrfs qgroup remove " + member + " " + parent, ENOENT, 0, member.packed(), parent.packed());
    }

    /** {@inheritDoc} <p>{@code BTRFS_IOC_QGROUP_LIMIT}, both limits, on {@code pool}. */
    @Override
    public void limit(Path pool, Qgroup group, long bytes) {
        String step = "btrfs qgroup limit";
        if (bytes <= 0) throw failure(step, pool, "the limit must be positive, was " + bytes, -1, null);
        inArena(arena -> {
            limitGroup(arena, pool, group.packed(), bytes, pool);
        });
    }

    /** {@code BTRFS_IOC_QGROUP_LIMIT} on {@code dir}, both limits of {@code qgroup}; failures name {@code subject}. */
    private void limitGroup(Arena arena, Path dir, long qgroup, long bytes, Path subject) {
        String step = "btrfs qgroup limit";
        int fd = openDirectory(arena, dir, step);
        try {
            MemorySegment args = arena.allocate(QGROUP_LIMIT_ARGS_SIZE, 8); // zeroed: no reserve limits
            args.set(JAVA_LONG, 0, qgroup);
            args.set(JAVA_LONG, 8, BTRFS_QGROUP_LIMIT_MAX_RFER | BTRFS_QGROUP_LIMIT_MAX_EXCL);
            args.set(JAVA_LONG, 16, bytes);
            args.set(JAVA_LONG, 24, bytes);
            call(arena, fd, BTRFS_IOC_QGROUP_LIMIT, args, step, subject);
        } finally {
            closeQuietly(fd);
        }
    }

    /**
     * {@inheritDoc}
     * <p>{@code BTRFS_IOC_TREE_SEARCH} of the quota tree for its member-of items, a buffer at a
     * time, each search starting past the last key seen. Only those items have an object id
     * other than 0 there (status, info and limit items are keyed 0), and each relation is
     * stored both ways: the member is the smaller of the two ids (a lower level).
     */
    @Override
    public Set<Membership> memberships(Path pool) {
        String step = "btrfs qgroup show";
        var found = new LinkedHashSet<Membership>();
        return inArena(arena -> {
            int fd = openDirectory(arena, pool, step);
            try {
                MemorySegment args = arena.allocate(ARGS_SIZE, 8);
                long objectid = 1, offset = 0;
                while (true) {
                    args.fill((byte) 0);
                    args.set(JAVA_LONG, 0, BTRFS_QUOTA_TREE_OBJECTID);
                    args.set(JAVA_LONG, 8, objectid);
                    args.set(JAVA_LONG, 16, -1L);
                    args.set(JAVA_LONG, 24, offset);
                    args.set(JAVA_LONG, 32, -1L);
                    args.set(JAVA_LONG, 48, -1L);
                    args.set(JAVA_INT, 56, BTRFS_QGROUP_RELATION_KEY);
                    args.set(JAVA_INT, 60, BTRFS_QGROUP_RELATION_KEY);
                    args.set(JAVA_INT, 64, Integer.MAX_VALUE);
                    call(arena, fd, BTRFS_IOC_TREE_SEARCH, args, step, pool);
                    int items = args.get(JAVA_INT, 64);
                    if (items == 0) return found;
                    long at = SEARCH_KEY_SIZE;
                    for (int i = 0; i < items; i++) {
                        objectid = args.get(JAVA_LONG, at + 8);
                        offset = args.get(JAVA_LONG, at + 16);
                        int type = args.get(JAVA_INT, at + 24);
                        int length = args.get(JAVA_INT, at + 28);
                        if (type == BTRFS_QGROUP_RELATION_KEY && Long.compareUnsigned(objectid, offset) < 0)
                            found.add(new Membership(Qgroup.unpacked(objectid), Qgroup.unpacked(offset)));
                        at += SEARCH_HEADER_SIZE + length;
                    }
                    if (offset == -1L) {
                        if (objectid == -1L) return found;
                        objectid++;
                        offset = 0;
                    } else {
                        offset++;
                    }
                }
            } finally {
                closeQuietly(fd);
            }
        });
    }

    /** A qgroup ioctl whose arguments are {@code words}, made on {@code pool}; {@code done} is the errno of "already so". */
    private void groupCall(Path pool, long request, String step, int done, long... words) {
        inArena(arena -> {
            int fd = openDirectory(arena, pool, step);
            try {
                MemorySegment args = arena.allocate(8L * words.length, 8);
                for (int i = 0; i < words.length; i++) args.setAtIndex(JAVA_LONG, i, words[i]);
                try {
                    call(arena, fd, request, args, step, pool);
                } catch (StasisException e) {
                    if (!Integer.valueOf(done).equals(e.details().get("errno"))) throw e;
                }
            } finally {
                closeQuietly(fd);
            }
        });
    }

    /** The id of the subvolume whose root directory {@code subvolume} is (its level-0 qgroup id). */
    private long subvolumeId(Arena arena, Path subvolume, String step) {
        int fd = openDirectory(arena, subvolume, step);
        try {
            MemorySegment args = arena.allocate(ARGS_SIZE, 8); // tree id 0: the one fd is on
            args.set(JAVA_LONG, 8, SUBVOLUME_ROOT_INODE);
            call(arena, fd, BTRFS_IOC_INO_LOOKUP, args, step, subvolume);
            return args.get(JAVA_LONG, 0);
        } finally {
            closeQuietly(fd);
        }
    }

    /** The filesystem's UUID ({@code BTRFS_IOC_FS_INFO}), as sysfs names it under /sys/fs/btrfs. */
    @Override
    public Optional<String> filesystemId(Path anyPath) {
        String step = "btrfs filesystem info";
        return inArena(arena -> {
            int fd = openDirectory(arena, anyPath, step);
            try {
                MemorySegment args = arena.allocate(FS_INFO_ARGS_SIZE, 8);
                call(arena, fd, BTRFS_IOC_FS_INFO, args, step, anyPath);
                var id = args.asSlice(FS_INFO_FSID_OFFSET, 16).asByteBuffer();
                return Optional.of(new UUID(id.getLong(), id.getLong()).toString());
            } finally {
                closeQuietly(fd);
            }
        });
    }

    private int openDirectory(Arena arena, Path dir, String step) {
        MemorySegment state = arena.allocate(Libc.CALL_STATE);
        MemorySegment path = arena.allocateFrom(dir.toString());
        int fd = (int) Libc.restarting("open", state, () -> (int) open.invokeExact(state, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0));
        if (fd < 0) throw failure(step, dir, "open " + dir + ": " + describe(-fd), -fd, null);
        return fd;
    }

    private void call(Arena arena, int fd, long request, MemorySegment args, String step, Path subject) {
        MemorySegment state = arena.allocate(Libc.CALL_STATE);
        int rc = (int) Libc.restarting("ioctl", state, () -> (int) ioctl.invokeExact(state, fd, request, args));
        if (rc < 0) {
            int errno = -rc;
            String problem = describe(errno);
            if (errno == ENOTEMPTY && request == BTRFS_IOC_SNAP_DESTROY)
                problem += " (it contains nested subvolumes: delete those first)";
            if (errno == ENOTCONN && request == BTRFS_IOC_QGROUP_LIMIT)
                problem += " (quotas are off on this filesystem)";
            if (errno == EINVAL && request == BTRFS_IOC_QUOTA_CTL && args.get(JAVA_LONG, 0) == BTRFS_QUOTA_CTL_ENABLE_SIMPLE_QUOTA)
                problem += " (a kernel without simple quotas: they need 6.7 or later)";
            throw failure(step, subject, subject + ": " + problem, errno, null);
        }
    }

    private static void putName(MemorySegment args, long offset, Path path, String step) {
        byte[] name = path.getFileName().toString().getBytes(StandardCharsets.UTF_8);
        if (name.length == 0 || name.length > NAME_MAX)
            throw failure(step, path, "bad subvolume name length " + name.length, -1, null);
        MemorySegment.copy(name, 0, args, JAVA_BYTE, offset, name.length); // rest of args is zeroed: NUL-terminated
    }

    /** Never repeated: on Linux the descriptor is gone even when close reports an error. */
    private void closeQuietly(int fd) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Libc.CALL_STATE);
            Libc.once("close", () -> (int) close.invokeExact(state, fd));
        } catch (RuntimeException e) {
            log.atWarn().addKeyValue("fd", fd).setCause(e).log("close failed");
        }
    }

    private static String describe(int errno) {
        return "errno " + errno + " (" + Libc.strerror(errno) + ")";
    }

    private static StasisException failure(String step, Path subject, String problem, int errno, Throwable cause) {
        var details = new LinkedHashMap<String, Object>();
        details.put("step", step);
        details.put("path", subject.toString());
        if (errno >= 0) details.put("errno", errno);
        return new StasisException(ErrorCode.RUNTIME_FAILED, step + " failed: " + problem, details, cause);
    }

    /** _IOW(BTRFS_IOCTL_MAGIC, nr, size) from asm-generic/ioctl.h: direction write (1) in bits 30-31. */
    static long iow(int nr, long size) {
        return (1L << 30) | (size << 16) | (0x94L << 8) | nr;
    }

    /** _IOR(BTRFS_IOCTL_MAGIC, nr, size): direction read (2). */
    static long ior(int nr, long size) {
        return (2L << 30) | (size << 16) | (0x94L << 8) | nr;
    }

    /** _IOWR(BTRFS_IOCTL_MAGIC, nr, size): both directions (3). */
    static long iowr(int nr, long size) {
        return (3L << 30) | (size << 16) | (0x94L << 8) | nr;
    }
}
