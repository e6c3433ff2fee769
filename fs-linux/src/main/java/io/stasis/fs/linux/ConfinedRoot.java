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
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.atomic.AtomicReference;
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

    // --- building a tree (a template from image layers) ---
    //
    // These take a path inside the root as an archive names it and act on that very entry: its
    // last component is never followed (a symlink there is created, changed or removed itself),
    // while the directories above it are resolved confined to the root (RESOLVE_IN_ROOT: a symlink
    // among them, planted by an earlier entry, is followed as inside the root, never out of it).
    // They are for a tree no sandbox runs on yet: /proc, /sys and /dev are plain directories of the
    // tree here, not refused as kernel views. '..' in a path is refused (EINVAL). Missing parent
    // directories are created (0755, owned by owner()); a dangling symlink in their place is
    // refused (ENOENT), not followed to create its target.

    /**
     * What is at {@code path} itself ({@code lstat}), or empty when nothing is; the root for
     * {@code /}.
     *
     * @throws LinuxException ENOTDIR when a parent is not a directory
     */
    public Optional<Stat> lstat(String path) {
        var comps = treeComponents(path);
        if (comps.isEmpty()) {
            try (Fd root = rootDirectory()) {
                return Optional.of(Syscalls.fstat(root.value()));
            }
        }
        try (Fd parent = openParent(comps, false)) {
            return Confinement.lstat(parent, comps.getLast());
        } catch (LinuxException e) {
            if (e.is(Errno.ENOENT)) return Optional.empty();
            throw e;
        }
    }

    /** The names in the directory at {@code path} (a symlink there is not followed: ENOTDIR), unsorted. */
    public List<String> names(String path) {
        var comps = treeComponents(path);
        try (Fd parent = comps.isEmpty() ? rootDirectory() : openParent(comps, false);
             Fd dir = Confinement.openChildDirectory(parent, comps.isEmpty() ? "." : comps.getLast())) {
            return Syscalls.readDirectory(dir.value()).stream().map(Syscalls.DirEntry::name).toList();
        }
    }

    /**
     * Removes whatever is at {@code path}, a directory with its whole tree (never following a
     * symlink, never crossing a mount), and does nothing when nothing is there. The root is refused (EBUSY).
     */
    public void removeEntry(String path) {
        var comps = treeComponents(path);
        refuseRootOrDotDot(comps, "remove", display(comps));
        Fd parent;
        try {
            parent = openParent(comps, false);
        } catch (LinuxException e) {
            if (e.is(Errno.ENOENT)) return;
            throw e;
        }
        try (parent) {
            TreeDeletion.removeEntry(parent, comps.getLast(), 0);
        }
    }

    /**
     * Creates a directory with exactly {@code mode} (the umask does not narrow it) owned by
     * {@code owner}.
     *
     * @throws LinuxException EEXIST when anything (a symlink included) is at {@code path}
     */
    public void createDirectory(String path, int mode, FileOwner owner) {
        checkMode(mode);
        var comps = creatableComponents(path, "mkdir");
        try (Fd parent = openParent(comps, true)) {
            Syscalls.mkdirat(parent.value(), comps.getLast(), 0700);
            try (Fd created = Confinement.openChildDirectory(parent, comps.getLast())) {
                Syscalls.fchown(created.value(), owner.uid(), owner.gid());
                Syscalls.fchmod(created.value(), mode);
            }
        }
    }

    /**
     * Creates a regular file from {@code content}, owned by {@code owner}, then gives it exactly
     * {@code mode} (setuid and setgid bits included: they are set after the owner, which would
     * clear them). If {@code content} throws, the partial file is removed.
     *
     * @return the bytes written
     * @throws LinuxException EEXIST when anything (a symlink included) is at {@code path}
     */
    public long createFile(String path, InputStream content, int mode, FileOwner owner) throws IOException {
        checkMode(mode);
        var comps = creatableComponents(path, "create");
        try (Fd parent = openParent(comps, true)) {
            String name = comps.getLast();
            try (Fd file = new Fd(Syscalls.openat2(parent.value(), name,
                    Syscalls.O_CREAT | Syscalls.O_EXCL | Syscalls.O_WRONLY | Syscalls.O_NOFOLLOW | O_CLOEXEC, 0600, Confinement.ONE_NAME))) {
                try {
                    Syscalls.fchown(file.value(), owner.uid(), owner.gid());
                    long written = 0;
                    byte[] buffer = new byte[64 * 1024];
                    for (int n; (n = content.read(buffer)) != -1; written += n) Syscalls.write(file.value(), buffer, 0, n);
                    Syscalls.fchmod(file.value(), mode);
                    return written;
                } catch (IOException | RuntimeException e) {
                    try {
                        Syscalls.unlinkat(parent.value(), name, 0); // created by this call (O_EXCL): no partial file stays
                    } catch (LinuxException cleanup) {
                        e.addSuppressed(cleanup);
                    }
                    throw e;
                }
            }
        }
    }

    /**
     * Creates a symlink holding {@code target} exactly as given (absolute or relative; it is
     * never resolved here), owned by {@code owner}.
     *
     * @throws LinuxException EEXIST when anything is at {@code path}; EINVAL for an empty target or one with NUL
     */
    public void createSymlink(String path, String target, FileOwner owner) {
        if (target.isEmpty() || target.indexOf('\0') >= 0)
            throw new LinuxException(Errno.EINVAL, "symlinkat", path, "a symlink target must be non-empty and free of NUL");
        var comps = creatableComponents(path, "symlink");
        try (Fd parent = openParent(comps, true)) {
            Syscalls.symlinkat(target, parent.value(), comps.getLast());
            Syscalls.fchownat(parent.value(), comps.getLast(), owner.uid(), owner.gid(), AT_SYMLINK_NOFOLLOW);
        }
    }

    /**
     * Creates {@code path} as another name of the inode at {@code existing} (a symlink there is
     * linked itself, not followed, so the inode is always one inside the root).
     *
     * @throws LinuxException EEXIST when anything is at {@code path}; ENOENT when nothing is at
     *                        {@code existing}; EPERM when it is a directory
     */
    public void createHardLink(String path, String existing) {
        var comps = creatableComponents(path, "link");
        var from = creatableComponents(existing, "link to");
        try (Fd fromParent = openParent(from, false); Fd parent = openParent(comps, true)) {
            Syscalls.linkat(fromParent.value(), from.getLast(), parent.value(), comps.getLast(), 0);
        }
    }

    /** Creates a FIFO with exactly {@code mode}, owned by {@code owner}; EEXIST when anything is at {@code path}. */
    public void createFifo(String path, int mode, FileOwner owner) {
        checkMode(mode);
        var comps = creatableComponents(path, "mkfifo");
        try (Fd parent = openParent(comps, true)) {
            Syscalls.mknodat(parent.value(), comps.getLast(), Syscalls.S_IFIFO | 0600, 0);
            Syscalls.fchownat(parent.value(), comps.getLast(), owner.uid(), owner.gid(), AT_SYMLINK_NOFOLLOW);
        }
        setMode(path, mode);
    }

    /** Sets the owner of the entry itself ({@code fchownat} with AT_SYMLINK_NOFOLLOW); this clears setuid bits and file capabilities. */
    public void setOwner(String path, FileOwner owner) {
        withEntry(path, (parent, name) -> Syscalls.fchownat(parent.value(), name, owner.uid(), owner.gid(), AT_SYMLINK_NOFOLLOW));
    }

    /**
     * Sets the permission bits (setuid, setgid and sticky included) of the entry at {@code path}.
     *
     * @throws LinuxException EOPNOTSUPP for a symlink, which has no mode of its own
     */
    public void setMode(String path, int mode) {
        checkMode(mode);
        withEntry(path, (parent, name) -> {
            try (Fd entry = new Fd(Syscalls.openat2(parent.value(), name, O_PATH | Syscalls.O_NOFOLLOW | O_CLOEXEC, 0, Confinement.ONE_NAME))) {
                if (Syscalls.fstat(entry.value()).isSymlink())
                    throw new LinuxException(Errno.EOPNOTSUPP, "fchmodat", path, "a symlink has no mode of its own");
                Syscalls.fchmodat(Syscalls.AT_FDCWD, entry.procPath(), mode, 0); // the magic link leads to this inode only
            }
        });
    }

    /**
     * Sets an extended attribute of the entry itself (a symlink is not followed; Linux allows
     * only {@code security.*} and {@code trusted.*} ones on symlinks). Kernel rules apply: a
     * {@code security.capability} value is checked, and cleared again by a later owner change or write.
     */
    public void setXattr(String path, String name, byte[] value) {
        withEntry(path, (parent, entry) -> Syscalls.lsetxattr(below(parent, entry), name, value, 0));
    }

    /** An extended attribute of the entry itself, or empty when it has none of that name. */
    public Optional<byte[]> xattr(String path, String name) {
        var value = new AtomicReference<byte[]>();
        withEntry(path, (parent, entry) -> {
            try {
                value.set(Syscalls.lgetxattr(below(parent, entry), name));
            } catch (LinuxException e) {
                if (!e.is(Syscalls.ENODATA)) throw e;
            }
        });
        return Optional.ofNullable(value.get());
    }

    /** The names of the extended attributes of the entry itself. */
    public List<String> xattrNames(String path) {
        var names = new AtomicReference<List<String>>();
        withEntry(path, (parent, entry) -> names.set(Syscalls.llistxattr(below(parent, entry))));
        return names.get();
    }

    /** Sets the modification time, and the access time to the same, of the entry itself (a symlink's own times). */
    public void setMtime(String path, Instant mtime) {
        withEntry(path, (parent, name) -> Syscalls.utimensat(parent.value(), name, mtime, mtime, AT_SYMLINK_NOFOLLOW));
    }

    private interface EntryAction {
        void apply(Fd parent, String name);
    }

    /** Runs {@code action} on the directory holding the entry and its name ({@code .} in the root for the root). */
    private void withEntry(String path, EntryAction action) {
        var comps = treeComponents(path);
        try (Fd parent = comps.isEmpty() ? rootDirectory() : openParent(comps, false)) {
            action.apply(parent, comps.isEmpty() ? "." : comps.getLast());
        }
    }

    /** The path of a name in a confined directory fd that the *xattr calls take: the magic link leads to that directory only. */
    private static String below(Fd dir, String name) {
        return dir.procPath() + "/" + name;
    }

    private static List<String> treeComponents(String path) {
        var comps = SandboxComponents.of(path);
        if (comps.contains(".."))
            throw new LinuxException(Errno.EINVAL, "resolve", display(comps), "'..' is refused in a path of a tree being built");
        return comps;
    }

    private static List<String> creatableComponents(String path, String action) {
        var comps = treeComponents(path);
        refuseRootOrDotDot(comps, action, display(comps));
        return comps;
    }

    private Fd rootDirectory() {
        return confinement.openDirectory(List.of());
    }

    /**
     * The directory holding the last component, opened confined ({@code O_PATH}); with
     * {@code create} missing directories on the way are made (0755, owned by {@link #owner()}).
     */
    private Fd openParent(List<String> comps, boolean create) {
        var parentComps = comps.subList(0, comps.size() - 1);
        try (Fd root = rootDirectory()) {
            try {
                return openConfinedDirectory(root, parentComps);
            } catch (LinuxException e) {
                if (!create || !e.is(Errno.ENOENT)) throw e;
            }
            Fd dir = new Fd(Syscalls.openat2(root.value(), ".", O_PATH | O_DIRECTORY | O_CLOEXEC, 0, Confinement.ONE_NAME));
            for (int i = 0; i < parentComps.size(); i++) {
                var prefix = parentComps.subList(0, i + 1);
                Fd next;
                try {
                    next = openConfinedDirectory(root, prefix);
                } catch (LinuxException e) {
                    if (!e.is(Errno.ENOENT)) {
                        dir.close();
                        throw e;
                    }
                    next = makeParent(dir, prefix);
                }
                dir.close();
                dir = next;
            }
            return dir;
        }
    }

    private Fd makeParent(Fd dir, List<String> prefix) {
        String name = prefix.getLast();
        try {
            Syscalls.mkdirat(dir.value(), name, 0700);
        } catch (LinuxException e) {
            dir.close();
            if (e.is(Errno.EEXIST))
                throw new LinuxException(Errno.ENOENT, "mkdirat", display(prefix), "a dangling symlink is in the place of a directory");
            throw e;
        }
        try (Fd created = Confinement.openChildDirectory(dir, name)) {
            Syscalls.fchown(created.value(), owner.uid(), owner.gid());
            Syscalls.fchmod(created.value(), FileCreation.DEFAULT_DIR_MODE);
            return new Fd(Syscalls.openat2(created.value(), ".", O_PATH | O_DIRECTORY | O_CLOEXEC, 0, Confinement.ONE_NAME));
        } catch (RuntimeException e) {
            dir.close();
            throw e;
        }
    }

    /** openat2 of directories below the root, confined to it (no kernel-view rule: see "building a tree"). */
    private static Fd openConfinedDirectory(Fd root, List<String> comps) {
        return new Fd(Syscalls.openat2(root.value(), display(comps), O_PATH | O_DIRECTORY | O_CLOEXEC, 0, Confinement.IN_ROOT));
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
