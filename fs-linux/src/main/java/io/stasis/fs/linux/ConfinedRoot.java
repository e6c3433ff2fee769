package io.stasis.fs.linux;

import static io.stasis.fs.linux.Syscalls.AT_REMOVEDIR;
import static io.stasis.fs.linux.Syscalls.AT_SYMLINK_NOFOLLOW;
import static io.stasis.fs.linux.Syscalls.O_CLOEXEC;
import static io.stasis.fs.linux.Syscalls.O_DIRECTORY;
import static io.stasis.fs.linux.Syscalls.O_NOCTTY;
import static io.stasis.fs.linux.Syscalls.O_NOFOLLOW;
import static io.stasis.fs.linux.Syscalls.O_PATH;
import static io.stasis.fs.linux.Syscalls.O_RDONLY;
import static io.stasis.fs.linux.Syscalls.RENAME_NOREPLACE;
import static io.stasis.fs.linux.Syscalls.RESOLVE_BENEATH;
import static io.stasis.fs.linux.Syscalls.RESOLVE_IN_ROOT;
import static io.stasis.fs.linux.Syscalls.RESOLVE_NO_MAGICLINKS;
import static io.stasis.fs.linux.Syscalls.RESOLVE_NO_SYMLINKS;
import static io.stasis.fs.linux.Syscalls.RESOLVE_NO_XDEV;
import static io.stasis.fs.linux.Syscalls.SEEK_SET;

import io.stasis.core.files.SandboxPath;
import io.stasis.core.spi.FileOwner;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.locks.LockSupport;

/**
 * One sandbox root, opened once from a trusted host path; every path handed to it afterwards is
 * a path as the sandbox sees it and is resolved by the kernel confined to that root
 * ({@code openat2} with {@code RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS}): {@code ..}, absolute
 * and relative symlinks and {@code /proc} magic links cannot lead outside, and because all later
 * work is relative to directory fds opened that way, a component swapped for a symlink between
 * check and use cannot redirect it either.
 *
 * <p>Files and directories it creates are owned by {@link #owner()}, the host uid/gid of the
 * sandbox's root. Failures are {@link LinuxException}s carrying the sandbox path; a string that
 * cannot be a path at all (empty, NUL, longer than 4096) is refused by {@link SandboxPath} with a
 * {@code StasisException} ({@code invalid_request}). The handle is safe to share between threads;
 * close it once nobody uses it any more.
 */
public final class ConfinedRoot implements AutoCloseable {
    /** Resolution for a sandbox path: {@code /} and {@code ..} stop at the root, no magic links. */
    static final long IN_ROOT = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    /** Resolution for one name in a directory fd: no symlink, no {@code ..} above it, no other mount. */
    static final long ONE_NAME = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;

    static final int DEFAULT_DIR_MODE = 0755;
    static final int DEFAULT_FILE_MODE = 0644;
    /** Like the kernel's own limit on symlinks followed in one lookup. */
    private static final int MAX_SYMLINK_HOPS = 40;
    /** Deeper trees are refused rather than risking the stack and one fd per level. */
    static final int MAX_DELETE_DEPTH = 1024;
    /** Tries before giving up on an entry the sandbox keeps changing while it is deleted. */
    private static final int MAX_ATTEMPTS = 16;
    private static final int COPY_BUFFER = 64 * 1024;

    /**
     * Where the sandbox sees kernel filesystems (procfs, sysfs, the runtime's /dev), mounted over
     * directories of the root. What the root holds there is hidden from the sandbox, so a write
     * there would succeed without the sandbox ever seeing it: these are refused.
     */
    static final List<String> KERNEL_VIEWS = List.of("proc", "sys", "dev");

    private final Fd root;
    private final FileOwner owner;
    private final Stat rootStat;
    /** The root's directories under {@link #KERNEL_VIEWS} (those that are directories, not symlinks). */
    private final List<Stat> kernelViews;

    private ConfinedRoot(Fd root, FileOwner owner) {
        this.root = root;
        this.owner = owner;
        this.rootStat = Syscalls.fstat(root.value());
        this.kernelViews = KERNEL_VIEWS.stream().flatMap(name -> lstat(root, name).stream()).filter(Stat::isDirectory).toList();
    }

    /** Opens the root directory of a sandbox; {@code hostRoot} is trusted and followed as given. */
    public static ConfinedRoot open(Path hostRoot, FileOwner owner) {
        Objects.requireNonNull(owner, "owner");
        var fd = new Fd(Syscalls.open(hostRoot.toAbsolutePath().toString(), O_PATH | O_DIRECTORY | O_CLOEXEC));
        try {
            return new ConfinedRoot(fd, owner);
        } catch (RuntimeException e) {
            fd.close();
            throw e;
        }
    }

    /** The host uid/gid that files created here get. */
    public FileOwner owner() {
        return owner;
    }

    /**
     * Reads up to {@code maxBytes} of a regular file from {@code offset} (symlinks followed inside
     * the root). Returns an empty array when {@code offset} is at or past the end.
     *
     * @throws LinuxException ENOENT when missing, EISDIR for a directory, EINVAL for another non-regular file
     */
    public byte[] readAt(String path, long offset, int maxBytes) {
        if (offset < 0 || maxBytes < 0) throw new IllegalArgumentException("offset and maxBytes must be >= 0");
        var comps = components(path);
        try (Fd file = openRegular(comps); Fd readable = reopen(file, O_RDONLY)) {
            long size = Syscalls.fstat(readable.value()).size();
            byte[] out = new byte[(int) Math.min(maxBytes, Math.max(0, size - offset))];
            int filled = 0;
            while (filled < out.length) {
                int n = Syscalls.pread(readable.value(), out, filled, out.length - filled, offset + filled);
                if (n == 0) break; // shrunk meanwhile
                filled += n;
            }
            return filled == out.length ? out : Arrays.copyOf(out, filled);
        }
    }

    /** The size of what {@code path} leads to (symlinks followed inside the root), or -1 when missing. */
    /**
     * Where the data of a file begins once its start was dropped with {@link #dropBefore}: the
     * first offset that is not a hole (its size when it is all hole, 0 when nothing was dropped).
     */
    public long dataStart(String path) {
        try (Fd file = openRegular(components(path)); Fd readable = reopen(file, O_RDONLY)) {
            try {
                return Syscalls.lseek(readable.value(), 0, Syscalls.SEEK_DATA);
            } catch (LinuxException e) {
                if (e.is(Errno.ENXIO)) return Syscalls.fstat(readable.value()).size(); // no data after 0: all hole
                throw e;
            }
        }
    }

    /**
     * Frees the disk space of a file's bytes before {@code offset}, rounded down to whole 4 KiB
     * blocks, keeping its size and every later offset: they read as zeros and {@link #dataStart}
     * moves past them. A writer appending to the file meanwhile is not disturbed.
     *
     * @return the file's data start afterwards
     */
    public long dropBefore(String path, long offset) {
        long blocks = offset & ~(BLOCK - 1);
        try (Fd file = openRegular(components(path)); Fd writable = reopen(file, Syscalls.O_WRONLY)) {
            if (blocks > 0) Syscalls.fallocate(writable.value(), Syscalls.FALLOC_FL_PUNCH_HOLE | Syscalls.FALLOC_FL_KEEP_SIZE, 0, blocks);
        }
        return dataStart(path);
    }

    public long sizeOf(String path) {
        try (Fd fd = openPath(components(path), true)) {
            return Syscalls.fstat(fd.value()).size();
        } catch (LinuxException e) {
            if (e.is(Errno.ENOENT) || e.is(Errno.ENOTDIR)) return -1;
            throw e;
        }
    }

    /**
     * Replaces (or creates) a regular file atomically with {@code data}, with permission bits
     * {@code mode}, creating missing parents (0755). New files and directories are owned by
     * {@link #owner()}; an existing file keeps its owner. A symlink at {@code path} is written
     * through (inside the root), not replaced.
     */
    public void writeFile(String path, byte[] data, int mode) {
        writeFile(path, data, mode, true);
    }

    /**
     * {@link #writeFile(String, byte[], int)}, with the data on disk before the rename only if
     * {@code fsync}: the host's own bookkeeping in a root (a boot id, a process's label) goes with
     * the sandbox's processes if the host dies, and an fsync costs milliseconds on btrfs.
     */
    public void writeFile(String path, byte[] data, int mode, boolean fsync) {
        try {
            replaceFile(components(path), new ByteArrayInputStream(data), OptionalInt.of(checkMode(mode)), fsync);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // cannot happen: the content is in memory
        }
    }

    /**
     * Creates a directory with {@code mode} and any missing parents (0755), owned by {@link #owner()};
     * an existing directory is fine.
     *
     * @throws LinuxException EEXIST or ENOTDIR when a file that is not a directory is in the way
     */
    public void mkdirs(String path, int mode) {
        makeDirectories(components(path), checkMode(mode));
    }

    /**
     * Removes a file, a symlink (never its target) or a whole directory tree; nothing when missing.
     * The walk works on directory fds and never follows a symlink, so a directory swapped for a
     * symlink midway cannot redirect it. The root itself is refused (EBUSY).
     */
    public void deleteRecursively(String path) {
        var comps = components(path);
        refuseRootOrDotDot(comps, "delete", path);
        Location loc;
        try {
            loc = locate(comps);
        } catch (LinuxException e) {
            if (e.is(Errno.ENOENT) || e.is(Errno.ENOTDIR)) return;
            throw e;
        }
        try (loc) {
            removeEntry(loc.dir(), loc.name(), 0);
        }
    }

    /**
     * The names in a directory (a symlink to a directory followed inside the root), sorted; empty
     * when it does not exist.
     */
    public List<String> names(String path) {
        try {
            return list(components(path)).stream().map(Entry::name).toList();
        } catch (LinuxException e) {
            if (e.is(Errno.ENOENT) || e.is(Errno.ENOTDIR)) return List.of();
            throw e;
        }
    }

    /** Writes to a pipe at most this much at a time: up to PIPE_BUF a write to a pipe is all or nothing. */
    private static final int PIPE_CHUNK = 4096;
    private static final long BLOCK = 4096;

    /**
     * Writes {@code data} into the FIFO at {@code path} (a process's standard input), opening it
     * for this write only: a writer held open across a checkpoint would have its unread data
     * restored twice. Waits up to {@code timeout} while the pipe is full.
     *
     * @throws LinuxException ENXIO when nobody reads the FIFO; EINVAL when it is not a FIFO; EAGAIN
     *                        when the reader took too long (its problem says how much was written)
     */
    public void writeToFifo(String path, byte[] data, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        try (Fd fifo = openPath(components(path), true)) {
            if (!Syscalls.fstat(fifo.value()).isFifo()) throw new LinuxException(Errno.EINVAL, "open", path, "not a FIFO");
            try (Fd writer = reopen(fifo, Syscalls.O_WRONLY | Syscalls.O_NONBLOCK)) {
                int done = 0;
                while (done < data.length) {
                    int len = Math.min(PIPE_CHUNK, data.length - done);
                    try {
                        Syscalls.write(writer.value(), data, done, len);
                        done += len;
                    } catch (LinuxException e) {
                        if (!e.is(Errno.EAGAIN)) throw e;
                        if (System.nanoTime() > deadline)
                            throw new LinuxException(Errno.EAGAIN, "write", path, "wrote " + done + " of " + data.length + " bytes");
                        LockSupport.parkNanos(2_000_000);
                    }
                }
            }
        }
    }

    /**
     * Pins the unix socket at {@code path}: the final component is not followed, so a symlink put
     * in its place is refused. Connect to {@link PinnedFile#procPath()}.
     *
     * @throws LinuxException ENOTSOCK when {@code path} is not a socket (a symlink included)
     */
    public PinnedFile pinSocket(String path) {
        Fd fd = openPath(components(path), false);
        try {
            Stat stat = Syscalls.fstat(fd.value());
            if (!stat.isSocket())
                throw new LinuxException(Errno.ENOTSOCK, "pinSocket", path, stat.isSymlink() ? "a symlink, not a socket" : "not a socket");
            return new PinnedFile(fd, stat);
        } catch (RuntimeException e) {
            fd.close();
            throw e;
        }
    }

    /**
     * Adds the directory at {@code path} to an inotify instance, resolved confined to the root (a
     * symlink in its place is refused), so that a sandbox cannot point a host watch elsewhere.
     *
     * @return the watch descriptor (the same one for a directory already watched by that instance)
     */
    public int addInotifyWatch(int inotifyFd, String path, int mask) {
        try (Fd dir = openPath(components(path), false)) {
            if (!Syscalls.fstat(dir.value()).isDirectory()) throw new LinuxException(Errno.ENOTDIR, "inotify_add_watch", path);
            return Syscalls.inotifyAddWatch(inotifyFd, dir.procPath(), mask | Syscalls.IN_ONLYDIR);
        }
    }

    @Override
    public void close() {
        root.close();
    }

    // --- confined operations for LinuxSandboxFiles (paths as component lists, '..' kept) ---

    /** An entry as stat sees it without following it, and its target if it is a symlink. */
    record Entry(String name, Stat stat, Optional<String> linkTarget) {
    }

    /** A regular file opened for reading, and its inode when opened. */
    record OpenedFile(Stat stat, InputStream stream) {
    }

    /** The entry itself ({@code lstat}). */
    Entry describe(List<String> comps) {
        try (Location loc = locate(comps)) {
            return entry(loc.dir(), loc.name()).orElseThrow(() -> new LinuxException(Errno.ENOENT, "statx", display(comps)));
        }
    }

    /** The entries of a directory (a symlink to a directory is followed), sorted by name. */
    List<Entry> list(List<String> comps) {
        try (Fd dir = openDirectory(comps)) {
            var out = new ArrayList<Entry>();
            for (var dirent : Syscalls.readDirectory(dir.value())) {
                entry(dir, dirent.name()).ifPresent(out::add); // absent: removed since read
            }
            out.sort(Comparator.comparing(Entry::name));
            return out;
        }
    }

    /** Opens a regular file for streaming: the confined fd is reopened read-only through /proc, same inode. */
    OpenedFile openForReading(List<String> comps) throws IOException {
        try (Fd file = openRegular(comps)) {
            Stat stat = Syscalls.fstat(file.value());
            return new OpenedFile(stat, Files.newInputStream(Path.of(file.procPath())));
        }
    }

    /** Creates a directory and its missing parents; returns the directory's inode. */
    Stat makeDirectories(List<String> comps, int mode) {
        try (Fd dir = ensureDirectory(comps, mode)) {
            return Syscalls.fstat(dir.value());
        }
    }

    /**
     * Writes a new version of a regular file from {@code content} and renames it over the old one
     * once complete; if {@code content} throws, the old file stays and the new one vanishes.
     * Returns the new inode.
     */
    Stat replaceFile(List<String> comps, InputStream content, OptionalInt mode) throws IOException {
        return replaceFile(comps, content, mode, true);
    }

    private Stat replaceFile(List<String> comps, InputStream content, OptionalInt mode, boolean fsync) throws IOException {
        List<String> target = comps;
        for (int hop = 0; hop <= MAX_SYMLINK_HOPS; hop++) {
            if (isRootOrDotDot(target)) throw new LinuxException(Errno.EISDIR, "write", display(comps));
            List<String> parentComps = target.subList(0, target.size() - 1);
            String name = target.getLast();
            refuseKernelView(target);
            try (Fd parent = ensureDirectory(parentComps, DEFAULT_DIR_MODE)) {
                refuseKernelViewIn(parent, name, comps);
                Optional<Stat> existing = lstat(parent, name);
                if (existing.isPresent() && existing.get().isSymlink()) {
                    // write through the link: resolve its target again from the root, confined
                    target = linkTarget(parentComps, Syscalls.readlinkat(parent.value(), name));
                    continue;
                }
                if (existing.isPresent() && existing.get().isDirectory())
                    throw new LinuxException(Errno.EISDIR, "write", display(comps));
                if (existing.isPresent() && !existing.get().isRegularFile())
                    throw new LinuxException(Errno.EINVAL, "write", display(comps), "not a regular file");
                return writeNewVersion(parent, name, existing, content, mode, fsync);
            }
        }
        throw new LinuxException(Errno.ELOOP, "write", display(comps), "too many levels of symbolic links");
    }

    /** Renames within the root; with {@code overwrite} false an existing destination is EEXIST. Returns the destination. */
    Entry move(List<String> from, List<String> to, boolean overwrite) {
        refuseRootOrDotDot(from, "move", display(from));
        refuseRootOrDotDot(to, "move to", display(to));
        try (Location source = locate(from); Location dest = locate(to)) {
            Syscalls.renameat2(source.dir().value(), source.name(), dest.dir().value(), dest.name(),
                    overwrite ? 0 : RENAME_NOREPLACE);
            return entry(dest.dir(), dest.name()).orElseThrow(() -> new LinuxException(Errno.ENOENT, "statx", display(to)));
        }
    }

    /** Removes a file or symlink; a directory only if empty unless {@code recursive}. ENOENT when missing. */
    void delete(List<String> comps, boolean recursive) {
        refuseRootOrDotDot(comps, "delete", display(comps));
        try (Location loc = locate(comps)) {
            Stat stat = Syscalls.statx(loc.dir().value(), loc.name(), AT_SYMLINK_NOFOLLOW);
            if (!stat.isDirectory()) Syscalls.unlinkat(loc.dir().value(), loc.name(), 0);
            else if (!recursive) Syscalls.unlinkat(loc.dir().value(), loc.name(), AT_REMOVEDIR);
            else removeEntry(loc.dir(), loc.name(), 0);
        }
    }

    // --- resolution ---

    /** A directory fd opened confined, and one name in it (never {@code ..}; {@code .} for the root). */
    private record Location(Fd dir, String name) implements AutoCloseable {
        @Override
        public void close() {
            dir.close();
        }
    }

    /**
     * The directory holding the last component, opened confined, and that component. A path
     * ending in {@code ..} (or the root) becomes the directory itself with name {@code .}: a bare
     * {@code ..} relative to a directory fd would not be clamped to the root.
     */
    private Location locate(List<String> comps) {
        if (isRootOrDotDot(comps)) return new Location(openDirectory(comps), ".");
        refuseKernelView(comps);
        Fd dir = openDirectory(comps.subList(0, comps.size() - 1));
        try {
            refuseKernelViewIn(dir, comps.getLast(), comps);
            return new Location(dir, comps.getLast());
        } catch (RuntimeException e) {
            dir.close();
            throw e;
        }
    }

    /** Opens a directory for reading and as a base for *at calls; symlinks followed inside the root. */
    private Fd openDirectory(List<String> comps) {
        return confined(comps, O_RDONLY | O_DIRECTORY | O_CLOEXEC, true);
    }

    /** An O_PATH fd on what the path names; {@code followLast} false leaves a final symlink unfollowed. */
    private Fd openPath(List<String> comps, boolean followLast) {
        return confined(comps, O_PATH | O_CLOEXEC | (followLast ? 0 : O_NOFOLLOW), followLast);
    }

    /** openat2 of a sandbox path, confined to the root and refused in or below a kernel view, however it is reached. */
    private Fd confined(List<String> comps, int flags, boolean followLast) {
        refuseKernelView(comps);
        Fd fd;
        try {
            fd = new Fd(Syscalls.openat2(root.value(), display(comps), flags, 0, IN_ROOT));
        } catch (LinuxException e) {
            // Missing in a kernel view is refused as being there, not reported missing.
            if (e.is(Errno.ENOENT) || e.is(Errno.ENOTDIR)) refuseThroughDirectory(comps, followLast);
            throw e;
        }
        try {
            if (Syscalls.fstat(fd.value()).isDirectory()) refuseBelowKernelView(fd, comps);
            else refuseThroughDirectory(comps, followLast);
            return fd;
        } catch (RuntimeException e) {
            fd.close();
            throw e;
        }
    }

    /** A path that names a kernel view or lies below one, as written ({@code ..} clamped at the root like the kernel does). */
    private static void refuseKernelView(List<String> comps) {
        var normalized = new SandboxPath(display(comps)).normalized();
        for (String view : KERNEL_VIEWS)
            if (normalized.equals("/" + view) || normalized.startsWith("/" + view + "/")) throw kernelView(comps);
    }

    /** A kernel view's own name in the root, reached through a symlink to the root ({@code /root/up/proc}). */
    private void refuseKernelViewIn(Fd dir, String name, List<String> comps) {
        if (KERNEL_VIEWS.contains(name) && Syscalls.fstat(dir.value()).sameInode(rootStat)) throw kernelView(comps);
    }

    /**
     * For a path that is not a directory (or is missing): its directory is checked, and where a
     * final symlink leads, again. A sandbox that swaps links meanwhile can at most reach the root's
     * hidden directories this way, never outside the root (every lookup stays confined).
     */
    private void refuseThroughDirectory(List<String> comps, boolean followLast) {
        List<String> target = comps;
        for (int hop = 0; hop <= MAX_SYMLINK_HOPS && !isRootOrDotDot(target); hop++) {
            refuseKernelView(target);
            List<String> parentComps = target.subList(0, target.size() - 1);
            String name = target.getLast();
            Fd parent;
            try {
                parent = new Fd(Syscalls.openat2(root.value(), display(parentComps), O_PATH | O_DIRECTORY | O_CLOEXEC, 0, IN_ROOT));
            } catch (LinuxException e) {
                return; // no directory to be in: the caller's own error stands
            }
            try (parent) {
                refuseBelowKernelView(parent, comps);
                refuseKernelViewIn(parent, name, comps);
                if (!followLast) return;
                var link = lstat(parent, name).filter(Stat::isSymlink);
                if (link.isEmpty()) return;
                target = linkTarget(parentComps, Syscalls.readlinkat(parent.value(), name));
            }
        }
    }

    /** A directory in or below a kernel view, found by walking up through {@code ..} to the root, which confined lookups stay below. */
    private void refuseBelowKernelView(Fd dir, List<String> comps) {
        if (kernelViews.isEmpty()) return;
        Stat stat = Syscalls.fstat(dir.value());
        Fd current = null;
        try {
            for (int depth = 0; depth <= SandboxPath.MAX_LENGTH / 2; depth++) {
                if (stat.sameInode(rootStat)) return;
                for (Stat view : kernelViews) if (stat.sameInode(view)) throw kernelView(comps);
                Fd parent = new Fd(Syscalls.openat2((current == null ? dir : current).value(), "..", O_PATH | O_DIRECTORY | O_CLOEXEC, 0, 0));
                if (current != null) current.close();
                current = parent;
                Stat above = Syscalls.fstat(current.value());
                if (above.sameInode(stat)) return; // the host's own root: not below this sandbox's (cannot happen confined)
                stat = above;
            }
        } finally {
            if (current != null) current.close();
        }
    }

    private static LinuxException kernelView(List<String> comps) {
        return new LinuxException(Errno.EACCES, "openat2", display(comps),
                "/proc, /sys and /dev are the kernel's views inside the sandbox, mounted over the root's own directories,"
                        + " which the files API does not reach (run a command to read them)");
    }

    /** An O_PATH fd on a regular file (symlinks followed inside the root); never opens a device or FIFO. */
    private Fd openRegular(List<String> comps) {
        Fd fd = openPath(comps, true);
        try {
            Stat stat = Syscalls.fstat(fd.value());
            if (stat.isDirectory()) throw new LinuxException(Errno.EISDIR, "open", display(comps));
            if (!stat.isRegularFile()) throw new LinuxException(Errno.EINVAL, "open", display(comps), "not a regular file");
            return fd;
        } catch (RuntimeException e) {
            fd.close();
            throw e;
        }
    }

    /** Reopens the inode behind an O_PATH fd with real access flags (regular files, and FIFOs to write to). */
    private static Fd reopen(Fd pathFd, int flags) {
        return new Fd(Syscalls.open(pathFd.procPath(), flags | O_CLOEXEC | O_NOCTTY));
    }

    /** A subdirectory of {@code dir} by name, refusing a symlink or mount point in its place. */
    private static Fd openChildDirectory(Fd dir, String name) {
        return new Fd(Syscalls.openat2(dir.value(), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0, ONE_NAME));
    }

    private static Optional<Stat> lstat(Fd dir, String name) {
        try {
            return Optional.of(Syscalls.statx(dir.value(), name, AT_SYMLINK_NOFOLLOW));
        } catch (LinuxException e) {
            if (e.is(Errno.ENOENT)) return Optional.empty();
            throw e;
        }
    }

    private static Optional<Entry> entry(Fd dir, String name) {
        try {
            Stat stat = Syscalls.statx(dir.value(), name, AT_SYMLINK_NOFOLLOW);
            Optional<String> target = stat.isSymlink() ? Optional.of(Syscalls.readlinkat(dir.value(), name)) : Optional.empty();
            return Optional.of(new Entry(name, stat, target));
        } catch (LinuxException e) {
            if (e.is(Errno.ENOENT)) return Optional.empty();
            throw e;
        }
    }

    // --- creation ---

    /**
     * Opens the directory at {@code comps}, creating it and missing parents. Each step resolves
     * from the root again, so a symlinked component is followed inside the root, like the kernel
     * would for the sandbox; a dangling symlink in the way is followed too, and its target created.
     */
    private Fd ensureDirectory(List<String> comps, int mode) {
        return ensureDirectory(comps, mode, new SymlinkBudget());
    }

    private Fd ensureDirectory(List<String> comps, int mode, SymlinkBudget budget) {
        try {
            return openDirectory(comps);
        } catch (LinuxException e) {
            if (!e.is(Errno.ENOENT) || comps.isEmpty()) throw e;
        }
        String name = comps.getLast();
        List<String> parentComps = comps.subList(0, comps.size() - 1);
        if (name.equals("..")) {
            ensureDirectory(parentComps, DEFAULT_DIR_MODE, budget).close();
            return openDirectory(comps);
        }
        try (Fd parent = ensureDirectory(parentComps, DEFAULT_DIR_MODE, budget)) {
            try {
                Syscalls.mkdirat(parent.value(), name, mode);
            } catch (LinuxException e) {
                if (!e.is(Errno.EEXIST)) throw e;
                Optional<Stat> inTheWay = lstat(parent, name);
                if (inTheWay.isPresent() && inTheWay.get().isSymlink()) { // dangling: create where it points, inside the root
                    budget.spend(display(comps));
                    return ensureDirectory(linkTarget(parentComps, Syscalls.readlinkat(parent.value(), name)), mode, budget);
                }
                return openExistingDirectory(comps); // created meanwhile, or a file is in the way
            }
            Fd created = openChildDirectory(parent, name);
            try {
                Syscalls.fchown(created.value(), owner.uid(), owner.gid());
                Syscalls.fchmod(created.value(), mode); // the umask narrowed what mkdirat set
                return created;
            } catch (RuntimeException e) {
                created.close();
                throw e;
            }
        }
    }

    /** Symlinks one creation may follow, like the kernel's limit for one lookup. */
    private static final class SymlinkBudget {
        private int left = MAX_SYMLINK_HOPS;

        void spend(String path) {
            if (--left < 0) throw new LinuxException(Errno.ELOOP, "mkdirat", path, "too many levels of symbolic links");
        }
    }

    private Fd openExistingDirectory(List<String> comps) {
        try {
            return openDirectory(comps);
        } catch (LinuxException e) {
            if (e.is(Errno.ENOENT) || e.is(Errno.ENOTDIR))
                throw new LinuxException(Errno.EEXIST, "mkdirat", display(comps), "a file that is not a directory is in the way");
            throw e;
        }
    }

    private Stat writeNewVersion(Fd parent, String name, Optional<Stat> existing, InputStream content, OptionalInt mode,
                                 boolean fsync) throws IOException {
        int permissions = mode.orElse(existing.map(Stat::permissions).orElse(DEFAULT_FILE_MODE));
        int uid = existing.map(Stat::uid).orElse(owner.uid());
        int gid = existing.map(Stat::gid).orElse(owner.gid());
        try (TempFile temp = TempFile.createIn(parent)) {
            Syscalls.fchown(temp.fd(), uid, gid); // before writing: chown would clear setuid bits set earlier
            byte[] buffer = new byte[COPY_BUFFER];
            for (int n; (n = content.read(buffer)) != -1; ) Syscalls.write(temp.fd(), buffer, 0, n);
            Syscalls.fchmod(temp.fd(), permissions);
            if (fsync) Syscalls.fsync(temp.fd());
            temp.commitAs(name);
            return Syscalls.fstat(temp.fd());
        }
    }

    // --- deletion ---

    /** Removes one name in {@code dir}, recursively if a directory; returns quietly once it is gone. */
    private void removeEntry(Fd dir, String name, int depth) {
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
            Optional<Stat> stat = lstat(dir, name);
            if (stat.isEmpty()) return;
            if (!stat.get().isDirectory()) {
                try {
                    Syscalls.unlinkat(dir.value(), name, 0);
                    return;
                } catch (LinuxException e) {
                    if (e.is(Errno.ENOENT)) return;
                    if (!e.is(Errno.EISDIR)) throw e;
                    continue; // became a directory
                }
            }
            Fd child;
            try {
                child = openChildDirectory(dir, name);
            } catch (LinuxException e) {
                if (e.is(Errno.ENOENT)) return;
                if (e.is(Errno.ELOOP) || e.is(Errno.ENOTDIR)) continue; // swapped for a symlink or file: look again
                throw e;
            }
            try (child) {
                emptyDirectory(child, depth + 1);
            }
            try {
                Syscalls.unlinkat(dir.value(), name, AT_REMOVEDIR);
                return;
            } catch (LinuxException e) {
                if (e.is(Errno.ENOENT)) return;
                if (!e.is(Errno.ENOTEMPTY) && !e.is(Errno.ENOTDIR)) throw e; // refilled or swapped: again
            }
        }
        throw new LinuxException(Errno.ENOTEMPTY, "unlinkat", name, "kept changing while being deleted");
    }

    private void emptyDirectory(Fd dir, int depth) {
        if (depth > MAX_DELETE_DEPTH)
            throw new LinuxException(Errno.ELOOP, "unlinkat", "(depth " + depth + ")", "directory tree deeper than " + MAX_DELETE_DEPTH);
        for (int round = 0; round < MAX_ATTEMPTS; round++) {
            Syscalls.lseek(dir.value(), 0, SEEK_SET);
            var entries = Syscalls.readDirectory(dir.value());
            if (entries.isEmpty()) return;
            for (var e : entries) removeEntry(dir, e.name(), depth);
        }
    }

    // --- paths ---

    /** The components of a sandbox path, {@code .} and empty ones dropped, {@code ..} kept. */
    static List<String> components(String path) {
        return new SandboxPath(path).components();
    }

    /** The path for openat2 and messages: absolute, which RESOLVE_IN_ROOT takes from the root. */
    static String display(List<String> comps) {
        return "/" + String.join("/", comps);
    }

    static boolean isRootOrDotDot(List<String> comps) {
        return comps.isEmpty() || comps.getLast().equals("..");
    }

    private static void refuseRootOrDotDot(List<String> comps, String action, String path) {
        if (comps.isEmpty())
            throw new LinuxException(Errno.EBUSY, action, path, "cannot " + action + " the root directory");
        if (comps.getLast().equals(".."))
            throw new LinuxException(Errno.EBUSY, action, path, "cannot " + action + " a path ending in '..'");
    }

    /** Where a symlink in {@code parentComps} leads, as a sandbox path (the kernel clamps it again). */
    private static List<String> linkTarget(List<String> parentComps, String link) {
        var next = new ArrayList<String>();
        if (!link.startsWith("/")) next.addAll(parentComps);
        for (String c : link.split("/")) if (!c.isEmpty() && !c.equals(".")) next.add(c);
        return next;
    }

    private static int checkMode(int mode) {
        if (mode < 0 || mode > 07777) throw new IllegalArgumentException("mode " + Integer.toOctalString(mode) + " is not within 0..07777");
        return mode;
    }
}
