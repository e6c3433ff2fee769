package io.stasis.fs.linux;

import static io.stasis.fs.linux.Confinement.entry;
import static io.stasis.fs.linux.Confinement.reopen;
import static io.stasis.fs.linux.SandboxComponents.display;
import static io.stasis.fs.linux.SandboxComponents.refuseRootOrDotDot;
import static io.stasis.fs.linux.Syscalls.AT_REMOVEDIR;
import static io.stasis.fs.linux.Syscalls.AT_SYMLINK_NOFOLLOW;
import static io.stasis.fs.linux.Syscalls.O_CLOEXEC;
import static io.stasis.fs.linux.Syscalls.O_DIRECTORY;
import static io.stasis.fs.linux.Syscalls.O_PATH;
import static io.stasis.fs.linux.Syscalls.O_RDONLY;
import static io.stasis.fs.linux.Syscalls.RENAME_NOREPLACE;

import io.stasis.core.files.SandboxPath;
import io.stasis.core.spi.FileOwner;
import java.io.IOException;
import java.io.InputStream;
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
 * check and use cannot redirect it either ({@link Confinement}).
 *
 * <p>Files and directories it creates are owned by {@link #owner()}, the host uid/gid of the
 * sandbox's root ({@link FileCreation}). Failures are {@link LinuxException}s carrying the sandbox
 * path; a string that cannot be a path at all (empty, NUL, longer than 4096) is refused by
 * {@link SandboxPath} with a {@code StasisException} ({@code invalid_request}). The handle is safe
 * to share between threads; close it once nobody uses it any more.
 */
public final class ConfinedRoot implements AutoCloseable {
    /** Writes to a pipe at most this much at a time: up to PIPE_BUF a write to a pipe is all or nothing. */
    private static final int PIPE_CHUNK = 4096;
    private static final long BLOCK = 4096;

    private final Confinement confinement;
    private final FileCreation creation;
    private final FileOwner owner;

    private ConfinedRoot(Fd root, FileOwner owner) {
        this.confinement = new Confinement(root);
        this.creation = new FileCreation(confinement, owner);
        this.owner = owner;
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

    /** An entry as stat sees it without following it, and its target if it is a symlink. */
    public record Entry(String name, Stat stat, Optional<String> linkTarget) {
    }

    /** A regular file opened for reading, and its inode when opened. */
    public record OpenedFile(Stat stat, InputStream stream) {
    }

    // --- reading ---

    /**
     * Reads up to {@code maxBytes} of a regular file from {@code offset} (symlinks followed inside
     * the root). Returns an empty array when {@code offset} is at or past the end.
     *
     * @throws LinuxException ENOENT when missing, EISDIR for a directory, EINVAL for another non-regular file
     */
    public byte[] readAt(String path, long offset, int maxBytes) {
        if (offset < 0 || maxBytes < 0) throw new IllegalArgumentException("offset and maxBytes must be >= 0");
        try (Fd file = confinement.openRegular(SandboxComponents.of(path)); Fd readable = reopen(file, O_RDONLY)) {
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

    /**
     * Where the data of a file begins once its start was dropped with {@link #dropBefore}: the
     * first offset that is not a hole (its size when it is all hole, 0 when nothing was dropped).
     */
    public long dataStart(String path) {
        try (Fd file = confinement.openRegular(SandboxComponents.of(path)); Fd readable = reopen(file, O_RDONLY)) {
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
        try (Fd file = confinement.openRegular(SandboxComponents.of(path)); Fd writable = reopen(file, Syscalls.O_WRONLY)) {
            if (blocks > 0) Syscalls.fallocate(writable.value(), Syscalls.FALLOC_FL_PUNCH_HOLE | Syscalls.FALLOC_FL_KEEP_SIZE, 0, blocks);
        }
        return dataStart(path);
    }

    /** The size of what {@code path} leads to (symlinks followed inside the root), or -1 when missing. */
    public long sizeOf(String path) {
        try (Fd fd = confinement.openPath(SandboxComponents.of(path), true)) {
            return Syscalls.fstat(fd.value()).size();
        } catch (LinuxException e) {
            if (e.is(Errno.ENOENT) || e.is(Errno.ENOTDIR)) return -1;
            throw e;
        }
    }

    /** Opens a regular file for streaming: the confined fd is reopened read-only through /proc, same inode. */
    public OpenedFile openForReading(String path) throws IOException {
        try (Fd file = confinement.openRegular(SandboxComponents.of(path))) {
            Stat stat = Syscalls.fstat(file.value());
            return new OpenedFile(stat, Files.newInputStream(Path.of(file.procPath())));
        }
    }

    /** The entry itself ({@code lstat}). */
    public Entry describe(String path) {
        var comps = SandboxComponents.of(path);
        try (var loc = confinement.locate(comps)) {
            return entry(loc.dir(), loc.name()).orElseThrow(() -> new LinuxException(Errno.ENOENT, "statx", display(comps)));
        }
    }

    /** The entries of a directory (a symlink to a directory is followed inside the root), sorted by name. */
    public List<Entry> list(String path) {
        try (Fd dir = confinement.openDirectory(SandboxComponents.of(path))) {
            var out = new ArrayList<Entry>();
            for (var dirent : Syscalls.readDirectory(dir.value())) {
                entry(dir, dirent.name()).ifPresent(out::add); // absent: removed since read
            }
            out.sort(Comparator.comparing(Entry::name));
            return out;
        }
    }

    // --- writing ---

    /**
     * Replaces (or creates) a regular file atomically with {@code content}, creating missing
     * parents (0755): a new version is written aside and renamed over the old one once complete;
     * if {@code content} throws, the old file stays and the new one vanishes. Permission bits are
     * {@code mode}, else the old file's, else 0644. New files and directories are owned by
     * {@link #owner()}; an existing file keeps its owner. A symlink at {@code path} is written
     * through (inside the root), not replaced. With {@code fsync} the data is on disk before the
     * rename; the host's own bookkeeping in a root (a boot id, a process's label) does without:
     * it goes with the sandbox's processes if the host dies, and an fsync costs milliseconds on btrfs.
     *
     * @return the new file's inode
     */
    public Stat writeFile(String path, InputStream content, OptionalInt mode, boolean fsync) throws IOException {
        mode.ifPresent(ConfinedRoot::checkMode);
        return creation.replaceFile(SandboxComponents.of(path), content, mode, fsync);
    }

    /**
     * Creates a directory with {@code mode} and any missing parents (0755), owned by {@link #owner()};
     * an existing directory is fine.
     *
     * @return the directory's inode
     * @throws LinuxException EEXIST or ENOTDIR when a file that is not a directory is in the way
     */
    public Stat mkdirs(String path, int mode) {
        return creation.makeDirectories(SandboxComponents.of(path), checkMode(mode));
    }

    /** Renames within the root; with {@code overwrite} false an existing destination is EEXIST. Returns the destination. */
    public Entry move(String from, String to, boolean overwrite) {
        var source = SandboxComponents.of(from);
        var destination = SandboxComponents.of(to);
        refuseRootOrDotDot(source, "move", display(source));
        refuseRootOrDotDot(destination, "move to", display(destination));
        try (var src = confinement.locate(source); var dest = confinement.locate(destination)) {
            Syscalls.renameat2(src.dir().value(), src.name(), dest.dir().value(), dest.name(),
                    overwrite ? 0 : RENAME_NOREPLACE);
            return entry(dest.dir(), dest.name()).orElseThrow(() -> new LinuxException(Errno.ENOENT, "statx", display(destination)));
        }
    }

    /**
     * Removes a file or a symlink (never its target); a directory only if empty unless
     * {@code recursive}, then with its whole tree ({@link TreeDeletion}: never following a
     * symlink, so a directory swapped for one midway cannot redirect it). The root itself is
     * refused (EBUSY).
     *
     * @throws LinuxException ENOENT when missing, ENOTDIR when a component above it is not a directory
     */
    public void delete(String path, boolean recursive) {
        var comps = SandboxComponents.of(path);
        refuseRootOrDotDot(comps, "delete", display(comps));
        try (var loc = confinement.locate(comps)) {
            Stat stat = Syscalls.statx(loc.dir().value(), loc.name(), AT_SYMLINK_NOFOLLOW);
            if (!stat.isDirectory()) Syscalls.unlinkat(loc.dir().value(), loc.name(), 0);
            else if (!recursive) Syscalls.unlinkat(loc.dir().value(), loc.name(), AT_REMOVEDIR);
            else TreeDeletion.removeEntry(loc.dir(), loc.name(), 0);
        }
    }

    // --- the runtime's channels into a sandbox ---

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
        try (Fd fifo = confinement.openPath(SandboxComponents.of(path), true)) {
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
        Fd fd = confinement.openPath(SandboxComponents.of(path), false);
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
        try (Fd dir = confinement.openPath(SandboxComponents.of(path), false)) {
            if (!Syscalls.fstat(dir.value()).isDirectory()) throw new LinuxException(Errno.ENOTDIR, "inotify_add_watch", path);
            return Syscalls.inotifyAddWatch(inotifyFd, dir.procPath(), mask | Syscalls.IN_ONLYDIR);
        }
    }

    @Override
    public void close() {
        confinement.close();
    }

    private static int checkMode(int mode) {
        if (mode < 0 || mode > 07777) throw new IllegalArgumentException("mode " + Integer.toOctalString(mode) + " is not within 0..07777");
        return mode;
    }
}
