package io.stasis.fs.linux;

import static io.stasis.fs.linux.Syscalls.AT_SYMLINK_NOFOLLOW;
import static io.stasis.fs.linux.Syscalls.O_CLOEXEC;
import static io.stasis.fs.linux.Syscalls.O_DIRECTORY;
import static io.stasis.fs.linux.Syscalls.O_NOFOLLOW;
import static io.stasis.fs.linux.Syscalls.O_PATH;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.files.FileEvent;
import io.stasis.core.files.SandboxPath;
import io.stasis.core.spi.FileWatcher;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link FileWatcher} on Linux with inotify, run from the host on the sandbox's root (inotify sees
 * writes made inside the sandbox; a watch survives a hibernation, since the inodes stay; a fork
 * has another root and needs its own watch).
 *
 * <p><b>Layout</b>: one inotify instance and one reader thread per {@link InotifyWatch}, so a
 * sandbox that floods its own watch with events overflows only that watch, and closing a watch
 * frees everything it holds at once. Each watch holds 3 fds (inotify, an eventfd to wake its
 * reader, the base directory) and one inotify watch per directory. The host's limits apply:
 * {@code fs.inotify.max_user_instances} (128 by default) bounds the watches open at a time,
 * {@code fs.inotify.max_user_watches} the directories of all of them; reaching either is
 * {@code host_busy} when a watch starts.
 *
 * <p><b>What is watched</b>: {@code path} is resolved confined to the root, its last component
 * not followed. A directory is watched with its entries (and, when recursive, every directory
 * below it, at most {@link Limits#maxDirectories()}); anything else (a file, a symlink, a FIFO) is
 * watched as one entry of its parent directory: its creation, modifications, deletion and
 * replacement by a rename, for as long as the parent stays. Symlinks below are never followed
 * and mounts never crossed.
 *
 * <p><b>Events</b>, paths as the sandbox sees them, in order: {@code create}, {@code modify}
 * (content written, or mode, owner or times changed), {@code delete}, {@code move} (with
 * {@code from}, when both ends are in the watched tree; a move out of it is a {@code delete}, a
 * move into it a {@code create} with a {@code create} for everything inside a moved-in
 * directory). Changes are delivered in windows that close {@link Limits#quietPeriod()} after
 * the last change, or {@link Limits#maxDelay()} after the first, coalesced as {@link EventBatch}
 * describes: a burst of writes to a file is one {@code modify}; a file written for a while
 * produces one per {@code maxDelay}.
 *
 * <p><b>Ending</b>: a watch ends on its own (see {@link InotifyWatch}) when what it watches goes
 * away, the sandbox's root included (checked every 2 s: deleting a subvolume sends no inotify
 * event), or when events were lost; the listener then gets one empty batch, and
 * {@link InotifyWatch#endReason()} says why.
 *
 * <p><b>Threads</b>: the listener is called on the watch's reader thread, one batch at a time.
 * It should return promptly: while it runs the kernel queues events (16384 by default,
 * {@code fs.inotify.max_queued_events}) and past that the watch ends as {@code overflowed}.
 */
public final class InotifyFileWatcher implements FileWatcher, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(InotifyFileWatcher.class);

    /**
     * @param maxDirectories directories one recursive watch may cover; a tree larger at the start
     *                       is refused ({@code invalid_request}), one growing past it later ends
     *                       the watch ({@code too_many_directories})
     * @param quietPeriod    a window closes this long after its last change
     * @param maxDelay       and at the latest this long after its first
     */
    public record Limits(int maxDirectories, Duration quietPeriod, Duration maxDelay) {
        public static final Limits DEFAULT = new Limits(8192, Duration.ofMillis(50), Duration.ofMillis(250));

        public Limits {
            if (maxDirectories < 1) throw new IllegalArgumentException("maxDirectories must be at least 1, not " + maxDirectories);
            if (quietPeriod.isNegative() || quietPeriod.isZero())
                throw new IllegalArgumentException("quietPeriod must be positive, not " + quietPeriod);
            if (maxDelay.compareTo(quietPeriod) < 0)
                throw new IllegalArgumentException("maxDelay " + maxDelay + " is shorter than quietPeriod " + quietPeriod);
        }
    }

    private final Limits limits;
    private final Set<InotifyWatch> open = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    public InotifyFileWatcher() {
        this(Limits.DEFAULT);
    }

    public InotifyFileWatcher(Limits limits) {
        this.limits = Objects.requireNonNull(limits, "limits");
    }

    /**
     * Starts a watch; see the class description for what it reports.
     *
     * @throws StasisException {@code file_not_found}, {@code not_a_directory} (a file where a
     *                         directory of the path should be), {@code invalid_request} (a tree
     *                         with more than {@link Limits#maxDirectories()} directories, a /proc
     *                         magic link), {@code host_busy} (the host's inotify limits)
     * @throws IllegalStateException after {@link #close()}
     */
    @Override
    public InotifyWatch watch(Path root, SandboxPath path, boolean recursive, Consumer<List<FileEvent>> listener) {
        Objects.requireNonNull(root, "root");
        Objects.requireNonNull(listener, "listener");
        if (closed) throw new IllegalStateException("the file watcher is closed");
        String shown = path.normalized();
        long started = System.nanoTime();
        InotifyWatch watch;
        try {
            watch = openWatch(openRoot(root), root.toAbsolutePath(), path.components(), recursive, listener);
        } catch (LinuxException e) {
            if (e.is(Errno.EMFILE) || e.is(Errno.ENFILE) || e.is(Errno.ENOMEM))
                throw new StasisException(ErrorCode.HOST_BUSY,
                        "no more file watches can be opened on this host (fs.inotify.max_user_instances, or open files)",
                        Map.of("path", shown, "errno", e.errnoName()), e);
            throw FileErrors.map(e, shown);
        }
        open.add(watch);
        if (closed) { // closed meanwhile: do not leave this one running
            watch.close();
            open.remove(watch);
            throw new IllegalStateException("the file watcher is closed");
        }
        watch.start();
        log.atDebug().addKeyValue("path", shown).addKeyValue("recursive", recursive)
                .addKeyValue("directories", watch.watchedDirectories())
                .addKeyValue("ms", (System.nanoTime() - started) / 1_000_000).log("file watch started");
        return watch;
    }

    /** Watches open now (not closed, not ended). */
    public int openWatches() {
        return open.size();
    }

    /** Closes every open watch; no new one can start. */
    @Override
    public void close() {
        closed = true;
        for (InotifyWatch watch : new ArrayList<>(open)) watch.close();
        open.clear();
    }

    /**
     * A directory is watched itself; anything else as a name in its parent. The last component
     * is never followed: a symlink is watched as an entry. Takes {@code rootFd} over.
     */
    private InotifyWatch openWatch(Fd rootFd, Path hostRoot, List<String> comps, boolean recursive, Consumer<List<FileEvent>> listener) {
        String display = SandboxComponents.display(comps);
        InotifyWatch.Base base;
        Optional<String> onlyName;
        try {
            try {
                base = locate(rootFd, display, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, Optional.empty());
                onlyName = Optional.empty();
            } catch (LinuxException e) {
                if (!e.is(Errno.ENOTDIR) || SandboxComponents.isRootOrDotDot(comps)) throw e;
                // not a directory (or a symlink): its name in the parent, which must hold it now
                display = SandboxComponents.display(comps.subList(0, comps.size() - 1));
                onlyName = Optional.of(comps.getLast());
                base = locate(rootFd, display, O_PATH | O_DIRECTORY | O_CLOEXEC, onlyName);
            }
        } catch (RuntimeException e) {
            rootFd.close();
            throw e;
        }
        String shownBase = new SandboxPath(display).normalized();
        return InotifyWatch.open(rootFd, hostRoot, base, shownBase, onlyName, recursive && onlyName.isEmpty(), listener, limits, open::remove);
    }

    /** Opens {@code lookup} confined to the root once, to learn its inode (and that {@code name} is in it). */
    private static InotifyWatch.Base locate(Fd rootFd, String lookup, int flags, Optional<String> name) {
        try (Fd dir = new Fd(Syscalls.openat2(rootFd.value(), lookup, flags, 0, Confinement.IN_ROOT))) {
            name.ifPresent(n -> Syscalls.statx(dir.value(), n, AT_SYMLINK_NOFOLLOW)); // ENOENT when missing
            return new InotifyWatch.Base(lookup, flags, Syscalls.fstat(dir.value()));
        }
    }

    /** Opening the root is the one step that sees a host path: it is logged, never put in the error. */
    private static Fd openRoot(Path root) {
        try {
            return new Fd(Syscalls.open(root.toAbsolutePath().toString(), O_PATH | O_DIRECTORY | O_CLOEXEC));
        } catch (LinuxException e) {
            log.atWarn().addKeyValue("root", root).addKeyValue("errno", e.errnoName()).log("sandbox root cannot be opened for watching");
            throw new StasisException(ErrorCode.INTERNAL,
                    "the sandbox's root filesystem cannot be opened (" + e.errnoName() + ")", Map.of("errno", e.errnoName()));
        }
    }
}
