package io.stasis.fs.linux;

import static io.stasis.fs.linux.Syscalls.AT_SYMLINK_NOFOLLOW;
import static io.stasis.fs.linux.Syscalls.DT_DIR;
import static io.stasis.fs.linux.Syscalls.DT_LNK;
import static io.stasis.fs.linux.Syscalls.DT_REG;
import static io.stasis.fs.linux.Syscalls.DT_UNKNOWN;
import static io.stasis.fs.linux.Syscalls.IN_ATTRIB;
import static io.stasis.fs.linux.Syscalls.IN_CREATE;
import static io.stasis.fs.linux.Syscalls.IN_DELETE;
import static io.stasis.fs.linux.Syscalls.IN_DELETE_SELF;
import static io.stasis.fs.linux.Syscalls.IN_EXCL_UNLINK;
import static io.stasis.fs.linux.Syscalls.IN_IGNORED;
import static io.stasis.fs.linux.Syscalls.IN_ISDIR;
import static io.stasis.fs.linux.Syscalls.IN_MODIFY;
import static io.stasis.fs.linux.Syscalls.IN_MOVED_FROM;
import static io.stasis.fs.linux.Syscalls.IN_MOVED_TO;
import static io.stasis.fs.linux.Syscalls.IN_MOVE_SELF;
import static io.stasis.fs.linux.Syscalls.IN_ONLYDIR;
import static io.stasis.fs.linux.Syscalls.IN_Q_OVERFLOW;
import static io.stasis.fs.linux.Syscalls.IN_UNMOUNT;
import static io.stasis.fs.linux.Syscalls.O_CLOEXEC;
import static io.stasis.fs.linux.Syscalls.O_DIRECTORY;
import static io.stasis.fs.linux.Syscalls.O_NOFOLLOW;
import static io.stasis.fs.linux.Syscalls.O_PATH;
import static io.stasis.fs.linux.Syscalls.O_RDONLY;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.files.FileEvent;
import io.stasis.core.files.FileEvent.Kind;
import io.stasis.core.files.FileType;
import io.stasis.core.spi.FileWatcher;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One running watch: its own inotify instance, and one platform thread that reads it, keeps
 * the tree of watched directories up to date, coalesces and delivers. Made by
 * {@link InotifyFileWatcher#watch}.
 *
 * <h2>Confinement</h2>
 * The base directory is opened confined to the sandbox root ({@code RESOLVE_IN_ROOT}) and
 * checked to be the very inode the watch started on; every later lookup (subdirectories to
 * watch, entries to describe) is relative to it with {@code RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV}: no symlink is ever followed below the base, nothing
 * above it is reached, no mount is crossed. inotify only ever gets {@code /proc/self/fd/N} of
 * such an fd, never a path made from sandbox names.
 *
 * <p>The base is not kept open between rounds of events, only the root ({@code O_PATH}): an open
 * fd pins the directory's dentry, and the kernel then holds {@code IN_DELETE_SELF} back until
 * that fd is closed, so a deleted base would never end the watch.
 *
 * <h2>Ending</h2>
 * A watch ends on its own when its base directory is deleted ({@link EndReason#DELETED}; also
 * when the sandbox's root itself goes away, e.g. its subvolume is deleted, which inotify does not
 * report: the host root path is checked every {@value #ROOT_CHECK_SECONDS} s), moved
 * ({@link EndReason#MOVED}) or unmounted, when the kernel's queue overflowed
 * ({@link EndReason#OVERFLOWED}: events were lost, start again), when the tree grows past the
 * directory limit ({@link EndReason#TOO_MANY_DIRECTORIES}), or on an unexpected failure. Then,
 * after the remaining events, the listener gets one <b>empty batch</b>; {@link #ended()} is
 * already true and {@link #endReason()} says why. {@link #close()} ends it without that.
 */
public final class InotifyWatch implements FileWatcher.Watch {
    private static final Logger log = LoggerFactory.getLogger(InotifyWatch.class);
    private static final AtomicLong THREADS = new AtomicLong();

    /** Why a watch ended on its own; {@link #wireName()} is meant for the API. */
    public enum EndReason {
        DELETED("deleted"), MOVED("moved"), UNMOUNTED("unmounted"), OVERFLOWED("overflowed"),
        TOO_MANY_DIRECTORIES("too_many_directories"), FAILED("failed");

        private final String wireName;

        EndReason(String wireName) {
            this.wireName = wireName;
        }

        public String wireName() {
            return wireName;
        }
    }

    /**
     * Events asked for on every directory. {@code IN_MODIFY} rather than {@code IN_CLOSE_WRITE}:
     * a file a process keeps open (a log, an exec's output) is never closed, and the coalescing
     * window already turns a write burst into one {@code modify}. {@code IN_ATTRIB} makes chmod,
     * chown and touch a {@code modify}. {@code IN_EXCL_UNLINK}: nothing about files already
     * deleted while still open. No {@code IN_DONT_FOLLOW}: the path given is the
     * {@code /proc/self/fd} link, which must be followed to its (confined, unfollowed) directory.
     */
    static final int MASK = IN_CREATE | IN_DELETE | IN_MODIFY | IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO
            | IN_DELETE_SELF | IN_MOVE_SELF | IN_EXCL_UNLINK | IN_ONLYDIR;
    /** How long a rename's first half waits for its second before it counts as a move out of the tree. */
    private static final long MOVE_PAIRING_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /** A window holding this many changes is delivered at once, whatever the timers say. */
    static final int MAX_BATCH = 4096;
    private static final Duration CLOSE_WAIT = Duration.ofSeconds(2);
    /** How often the host root path is checked to still lead to the root the watch holds. */
    static final int ROOT_CHECK_SECONDS = 2;
    private static final long ROOT_CHECK_NANOS = TimeUnit.SECONDS.toNanos(ROOT_CHECK_SECONDS);

    private final String shownBase;
    private final Optional<String> onlyName;
    private final boolean recursive;
    private final Consumer<List<FileEvent>> listener;
    private final InotifyFileWatcher.Limits limits;
    private final Fd root;
    /** The trusted host path {@link #root} was opened from, and the inode it was. */
    private final Path hostRoot;
    private final Stat rootIdentity;
    private final Base base;
    /** The base opened for the current round of events; closed at its end. Reader (or setup) only, under {@link #io}. */
    private Fd openBase;
    private final int inotifyFd;
    private final int wakeFd;
    private final WatchedDirectories directories;
    private final EventBatch batch = new EventBatch();
    private final Consumer<InotifyWatch> onFinish;

    /**
     * Held by the reader while it uses the fds (poll included, so the lock can be held for long:
     * others only take it to release the fds, after waking the poll); never while the listener runs.
     */
    private final ReentrantLock io = new ReentrantLock();
    private boolean released; // guarded by io
    private final Object wakeLock = new Object();
    private boolean wakeClosed; // guarded by wakeLock
    private volatile boolean closeRequested;
    private volatile EndReason endReason;
    /** {@link WatchedDirectories#size()} for other threads: the map itself is the reader's, and it holds {@link #io} while it polls. */
    private volatile int watchedCount;

    // reader thread only
    private int baseWd = -1;
    private EndReason ending;
    private PendingMove pendingMove;
    /**
     * Entries a scan of a new directory reported as created whose own {@code IN_CREATE} may still
     * be queued (made between {@code inotify_add_watch} and the listing): that one is a repeat and
     * dropped, even when it lands in a later window. Cleared whenever the queue is seen empty,
     * since by then every such event has been read.
     */
    private final Set<String> announced = new HashSet<>();
    private long windowStart; // nanoTime of the first event of the window, 0 when none
    private long lastEvent;
    private long nextRootCheck;

    /**
     * How to find the base directory again: {@code lookup} resolved from the sandbox root with
     * {@code RESOLVE_IN_ROOT} and {@code openFlags}, and the inode it must turn out to be.
     */
    record Base(String lookup, int openFlags, Stat identity) {
    }

    /** A rename's {@code IN_MOVED_FROM} waiting for its {@code IN_MOVED_TO}. */
    private record PendingMove(int cookie, String path, boolean directory, long deadline) {
    }

    private InotifyWatch(Fd root, Path hostRoot, Base base, String shownBase, Optional<String> onlyName, boolean recursive,
                         Consumer<List<FileEvent>> listener, InotifyFileWatcher.Limits limits,
                         int inotifyFd, int wakeFd, Consumer<InotifyWatch> onFinish) {
        this.root = root;
        this.hostRoot = hostRoot;
        this.rootIdentity = Syscalls.fstat(root.value());
        this.nextRootCheck = System.nanoTime() + ROOT_CHECK_NANOS;
        this.base = base;
        this.shownBase = shownBase;
        this.onlyName = onlyName;
        this.recursive = recursive && onlyName.isEmpty();
        this.listener = listener;
        this.limits = limits;
        this.inotifyFd = inotifyFd;
        this.wakeFd = wakeFd;
        this.directories = new WatchedDirectories(limits.maxDirectories());
        this.onFinish = onFinish;
    }

    /**
     * Sets a watch up on {@code base} and returns it, not yet reading: call {@link #start()}.
     *
     * @param root      the sandbox root, {@code O_PATH}; taken over: closed with the watch, or on failure
     * @param hostRoot  the trusted host path {@code root} was opened from
     * @param shownBase the base directory's path as the sandbox sees it
     * @param onlyName  for a single-entry watch, the entry's name in {@code base}
     * @param onFinish  told once the reader has stopped and freed everything
     * @throws StasisException {@code invalid_request} past the directory limit, {@code host_busy}
     *                         at the host's inotify limits
     */
    static InotifyWatch open(Fd root, Path hostRoot, Base base, String shownBase, Optional<String> onlyName, boolean recursive,
                             Consumer<List<FileEvent>> listener, InotifyFileWatcher.Limits limits, Consumer<InotifyWatch> onFinish) {
        int inotifyFd = -1;
        int wakeFd = -1;
        try {
            inotifyFd = Syscalls.inotifyInit();
            wakeFd = Syscalls.eventfd();
            var watch = new InotifyWatch(root, hostRoot, base, shownBase, onlyName, recursive, listener, limits, inotifyFd, wakeFd, onFinish);
            try {
                watch.watchExistingTree();
            } finally {
                watch.closeBase();
            }
            watch.watchedCount = watch.directories.size();
            return watch;
        } catch (RuntimeException e) {
            if (wakeFd >= 0) Syscalls.close(wakeFd);
            if (inotifyFd >= 0) Syscalls.close(inotifyFd);
            root.close();
            throw e;
        }
    }

    /** Starts the reader thread. */
    void start() {
        // a platform thread: a blocking poll through FFM would pin a virtual thread's carrier
        Thread.ofPlatform().daemon().name("file-watch-" + THREADS.incrementAndGet()).start(this::run);
    }

    @Override
    public boolean ended() {
        return endReason != null;
    }

    /** Why the watch ended on its own; empty while it runs or after {@link #close()}. */
    public Optional<EndReason> endReason() {
        return Optional.ofNullable(endReason);
    }

    @Override
    public Optional<String> whyEnded() {
        return endReason().map(EndReason::wireName);
    }

    /** How many directories are watched (the base included), as of the last events handled. */
    public int watchedDirectories() {
        return watchedCount;
    }

    /**
     * Stops the events and frees the inotify instance and fds, at once: the reader thread is
     * woken through an eventfd. A batch already being handed to the listener may still arrive;
     * no later one does. If the listener is busy in a call, the kernel resources are freed
     * anyway (the reader notices when the call returns). Idempotent; callable from the listener.
     */
    @Override
    public void close() {
        if (closeRequested) return;
        closeRequested = true;
        synchronized (wakeLock) {
            if (!wakeClosed) Syscalls.signalEventfd(wakeFd);
        }
        try {
            if (io.tryLock(CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                try {
                    release();
                } finally {
                    io.unlock();
                }
            } else {
                log.atWarn().addKeyValue("path", shown(onlyName.orElse(""))).log("file watch busy: its fds are freed when the reader returns");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // --- the reader thread ---

    private void run() {
        try {
            while (true) {
                List<FileEvent> ready;
                io.lock();
                try {
                    if (closeRequested) return;
                    int readable = Syscalls.pollReadable(pollTimeoutMillis(System.nanoTime()), inotifyFd, wakeFd);
                    if (closeRequested) return;
                    long now = System.nanoTime();
                    List<Syscalls.InotifyEvent> events = (readable & 1) != 0 ? Syscalls.readInotifyEvents(inotifyFd) : List.of();
                    if (events.isEmpty()) announced.clear();
                    for (var event : events) {
                        if (windowStart == 0) windowStart = now;
                        lastEvent = now;
                        handle(event, now);
                        if (ending != null) break;
                    }
                    if (pendingMove != null && (ending != null || now - pendingMove.deadline() >= 0)) resolvePendingMove();
                    if (ending == null && now - nextRootCheck >= 0) checkRoot(now);
                    ready = ending != null || windowDue(now) ? takeWindow() : null;
                    watchedCount = directories.size();
                } finally {
                    closeBase();
                    io.unlock();
                }
                if (ready != null && !ready.isEmpty()) deliver(ready);
                if (ending != null) {
                    finish(ending);
                    return;
                }
            }
        } catch (RuntimeException | Error e) {
            log.atError().setCause(e).addKeyValue("path", shown("")).log("file watch failed");
            finish(EndReason.FAILED);
        } finally {
            io.lock();
            try {
                release();
            } finally {
                io.unlock();
            }
            onFinish.accept(this);
        }
    }

    private void finish(EndReason reason) {
        if (closeRequested) return;
        endReason = reason;
        log.atInfo().addKeyValue("path", onlyName.map(this::shown).orElse(shownBase)).addKeyValue("reason", reason.wireName())
                .log("file watch ended");
        deliver(List.of());
    }

    private void deliver(List<FileEvent> events) {
        if (closeRequested) return;
        try {
            listener.accept(events);
        } catch (RuntimeException e) {
            log.atWarn().setCause(e).addKeyValue("path", shown("")).log("file watch listener failed; ending the watch");
            if (ending == null && !events.isEmpty()) ending = EndReason.FAILED;
        }
    }

    /** Closes the inotify instance (dropping all its watches), the root and the eventfd, once. Under {@link #io}. */
    private void release() {
        if (released) return;
        released = true;
        Syscalls.close(inotifyFd);
        closeBase();
        root.close();
        synchronized (wakeLock) {
            wakeClosed = true;
            Syscalls.close(wakeFd);
        }
    }

    /** Until the next timer is due: the window closing, a rename half given up, the root check. */
    private int pollTimeoutMillis(long now) {
        long wait = nextRootCheck - now; // differences only: nanoTime values may wrap
        if (windowStart != 0) {
            wait = Math.min(wait, Math.min(lastEvent + limits.quietPeriod().toNanos() - now,
                    windowStart + limits.maxDelay().toNanos() - now));
            if (batch.slots() >= MAX_BATCH) wait = 0;
        }
        if (pendingMove != null) wait = Math.min(wait, pendingMove.deadline() - now);
        return wait <= 0 ? 0 : (int) Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(wait) + 1);
    }

    /** Whether the window is over: quiet long enough, open too long, or full; never while a rename is half seen. */
    private boolean windowDue(long now) {
        if (windowStart == 0 || pendingMove != null) return false;
        return now - lastEvent >= limits.quietPeriod().toNanos()
                || now - windowStart >= limits.maxDelay().toNanos()
                || batch.slots() >= MAX_BATCH;
    }

    /** The window's changes as events, types looked up now (while the entries most likely still exist). */
    private List<FileEvent> takeWindow() {
        windowStart = 0;
        var events = new ArrayList<FileEvent>();
        for (Change c : batch.drain()) {
            FileType type = c.type().orElseGet(() -> c.kind() == Kind.DELETE ? FileType.FILE : typeNow(c.path()));
            events.add(new FileEvent(c.kind(), shown(c.path()), c.from().map(this::shown), type));
        }
        return events;
    }

    // --- translating inotify events ---

    private void handle(Syscalls.InotifyEvent event, long now) {
        if (event.has(IN_Q_OVERFLOW)) {
            end(EndReason.OVERFLOWED);
            return;
        }
        String dir = directories.path(event.wd());
        if (dir == null) return; // a watch given up already (moved out, removed): its last events are stale
        if (event.has(IN_UNMOUNT)) {
            end(EndReason.UNMOUNTED); // no mount is crossed, so any unmount takes the base with it
            return;
        }
        if (event.has(IN_IGNORED)) {
            directories.forget(event.wd());
            if (event.wd() == baseWd) end(EndReason.DELETED);
            return;
        }
        if (event.name().isEmpty()) {
            onDirectoryItself(event);
            return;
        }
        if (onlyName.isPresent() && !onlyName.get().equals(event.name())) return;

        String path = join(dir, event.name());
        if (event.has(IN_MODIFY | IN_ATTRIB) && isUnnamedFile(event.name(), path)) return;
        boolean isDir = event.has(IN_ISDIR);
        Optional<FileType> dirType = isDir ? Optional.of(FileType.DIRECTORY) : Optional.empty();
        // the two halves of a rename are queued back to back: anything else in between means the
        // first half was all there is (moved out of the watched tree)
        if (pendingMove != null && !(event.has(IN_MOVED_TO) && event.cookie() == pendingMove.cookie())) resolvePendingMove();

        if (event.has(IN_DELETE | IN_MOVED_FROM)) announced.remove(path);
        else if (event.has(IN_CREATE | IN_MOVED_TO) && announced.remove(path)) return; // reported by a scan already

        if (event.has(IN_MOVED_FROM)) {
            pendingMove = new PendingMove(event.cookie(), path, isDir, now + MOVE_PAIRING_NANOS);
        } else if (event.has(IN_MOVED_TO)) {
            if (pendingMove != null) {
                String from = pendingMove.path();
                pendingMove = null;
                batch.add(Change.move(from, path, dirType));
                if (isDir && recursive) directories.moveTree(from, path);
            } else { // moved in from outside the tree: new to the caller, like a creation
                batch.add(Change.of(Kind.CREATE, path, dirType));
                if (isDir && recursive) watchNewDirectory(path);
            }
        } else if (event.has(IN_CREATE)) {
            batch.add(Change.of(Kind.CREATE, path, dirType));
            if (isDir && recursive) watchNewDirectory(path);
        } else if (event.has(IN_DELETE)) {
            batch.add(Change.of(Kind.DELETE, path, Optional.of(isDir ? FileType.DIRECTORY : FileType.FILE)));
        } else if (event.has(IN_MODIFY | IN_ATTRIB)) {
            batch.add(Change.of(Kind.MODIFY, path, dirType));
        }
    }

    /** Events about a watched directory itself; a subdirectory's repeat what its parent reported. */
    private void onDirectoryItself(Syscalls.InotifyEvent event) {
        if (event.wd() != baseWd) return;
        if (event.has(IN_DELETE_SELF | IN_MOVE_SELF)) {
            // gone from where the caller watches it; for a single entry, its own delete came from the parent
            if (onlyName.isEmpty()) batch.add(Change.of(Kind.DELETE, "", Optional.of(FileType.DIRECTORY)));
            end(event.has(IN_DELETE_SELF) ? EndReason.DELETED : EndReason.MOVED);
        } else if (event.has(IN_ATTRIB) && onlyName.isEmpty()) {
            batch.add(Change.of(Kind.MODIFY, "", Optional.of(FileType.DIRECTORY)));
        }
    }

    /** A rename whose destination is outside the watched tree: a deletion, as far as the caller can see. */
    private void resolvePendingMove() {
        PendingMove move = pendingMove;
        pendingMove = null;
        batch.add(Change.of(Kind.DELETE, move.path(), Optional.of(move.directory() ? FileType.DIRECTORY : FileType.FILE)));
        if (move.directory() && recursive) {
            // its watches would go on reporting from wherever it went, under the old names
            for (int wd : directories.removeTree(move.path())) removeWatch(wd);
        }
    }

    /**
     * Whether the host root path still leads to the root this watch holds. Deleting a sandbox
     * removes its root (a btrfs subvolume) without any inotify event reaching the watches inside
     * it, and the root fd held here would otherwise keep the deleted subvolume's inodes alive.
     */
    private void checkRoot(long now) {
        nextRootCheck = now + ROOT_CHECK_NANOS;
        try {
            if (Syscalls.statx(Syscalls.AT_FDCWD, hostRoot.toString(), 0).sameInode(rootIdentity)) return;
        } catch (LinuxException e) {
            if (!e.is(Errno.ENOENT) && !e.is(Errno.ENOTDIR)) throw e;
        }
        log.atInfo().addKeyValue("root", hostRoot).log("the sandbox root is gone; ending its file watch");
        end(EndReason.DELETED);
    }

    private void end(EndReason reason) {
        if (ending == null) ending = reason;
    }

    // --- the tree of watched directories ---

    /** At start: the base directory and, when recursive, every directory below it, silently. */
    private void watchExistingTree() {
        try {
            if (!watchTree("", false)) {
                throw new StasisException(ErrorCode.INVALID_REQUEST,
                        "more than " + limits.maxDirectories() + " directories below " + shownBase
                                + ": watch a smaller tree, or without recursive",
                        Map.of("path", shownBase, "limit", limits.maxDirectories()));
            }
        } catch (LinuxException e) {
            if (e.is(Errno.ENOSPC) && e.syscall().equals("inotify_add_watch"))
                throw new StasisException(ErrorCode.HOST_BUSY,
                        "the host's limit of inotify watches (fs.inotify.max_user_watches) is reached",
                        Map.of("path", shownBase), e);
            throw e;
        }
    }

    /** A directory created (or moved in) after the start: watched, and everything in it reported as created. */
    private void watchNewDirectory(String path) {
        try {
            if (!watchTree(path, true)) end(EndReason.TOO_MANY_DIRECTORIES);
        } catch (LinuxException e) {
            if (!e.is(Errno.ENOSPC) && !e.is(Errno.ENOMEM)) throw e;
            log.atWarn().addKeyValue("path", shown(path)).addKeyValue("errno", e.errnoName())
                    .log("the host's inotify watch limit is reached (fs.inotify.max_user_watches)");
            end(EndReason.TOO_MANY_DIRECTORIES);
        }
    }

    /**
     * Adds a watch on {@code start} and, when recursive, on every directory below it, never
     * following a symlink nor crossing a mount. Each directory is watched before it is listed,
     * so an entry made meanwhile is seen by one or the other (both: the batch drops the repeat).
     * The listing opens the directory anew once the watch is in place: btrfs lists only the
     * entries a directory had when it was opened, so an entry made between an open and the
     * {@code inotify_add_watch} would be in neither.
     * With {@code announce}, every entry found is reported as created, parents first.
     *
     * @return false when the directory limit was reached
     */
    private boolean watchTree(String start, boolean announce) {
        var todo = new ArrayDeque<String>();
        todo.push(start);
        while (!todo.isEmpty()) {
            String dir = todo.pop();
            if (directories.isFull()) return false;
            Fd fd;
            try {
                fd = openBeneath(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            } catch (LinuxException e) {
                if (dir.isEmpty() || !replacedOrGone(e)) throw e;
                continue; // removed or swapped for a symlink already: its own events tell
            }
            try (fd) {
                int wd = Syscalls.inotifyAddWatch(inotifyFd, fd.procPath(), MASK);
                boolean known = directories.contains(wd);
                directories.put(wd, dir);
                if (dir.isEmpty()) baseWd = wd;
                if (known || !recursive) continue; // the same inode again: already listed
                List<Syscalls.DirEntry> entries;
                try (Fd listed = new Fd(Syscalls.openat2(fd.value(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0, Confinement.ONE_NAME))) {
                    entries = Syscalls.readDirectory(listed.value());
                }
                for (var entry : entries) {
                    String child = join(dir, entry.name());
                    Optional<FileType> type = typeOf(fd, entry);
                    if (type.isEmpty()) continue; // gone since listed
                    if (announce) {
                        batch.add(Change.of(Kind.CREATE, child, type));
                        announced.add(child);
                    }
                    if (type.get() == FileType.DIRECTORY) todo.push(child);
                }
            }
        }
        return true;
    }

    private void removeWatch(int wd) {
        try {
            Syscalls.inotifyRemoveWatch(inotifyFd, wd);
        } catch (LinuxException e) {
            if (!e.is(Errno.EINVAL)) throw e; // EINVAL: the kernel dropped it already
        }
    }

    // --- confined lookups below the base ---

    /**
     * The base directory, opened confined to the root for this round of events.
     *
     * @throws LinuxException ENOENT when it is gone or something else now has its name
     */
    private Fd base() {
        if (openBase == null) {
            Fd fd = new Fd(Syscalls.openat2(root.value(), base.lookup(), base.openFlags(), 0, Confinement.IN_ROOT));
            try {
                if (!Syscalls.fstat(fd.value()).sameInode(base.identity()))
                    throw new LinuxException(Errno.ENOENT, "openat2", shownBase, "the watched directory was replaced");
            } catch (RuntimeException e) {
                fd.close();
                throw e;
            }
            openBase = fd;
        }
        return openBase;
    }

    private void closeBase() {
        if (openBase != null) {
            openBase.close();
            openBase = null;
        }
    }

    /** Opens a path below the base: no symlink anywhere, nothing above the base, no other mount. */
    private Fd openBeneath(String path, int flags) {
        return new Fd(Syscalls.openat2(base().value(), path.isEmpty() ? "." : path, flags, 0, Confinement.ONE_NAME));
    }

    /** What the entry at {@code path} is now, not following a symlink; {@code file} when it is gone. */
    private FileType typeNow(String path) {
        if (path.isEmpty()) return FileType.DIRECTORY;
        try {
            if (path.indexOf('/') < 0) return typeOf(Syscalls.statx(base().value(), path, AT_SYMLINK_NOFOLLOW));
            try (Fd fd = openBeneath(path, O_PATH | O_NOFOLLOW | O_CLOEXEC)) {
                return typeOf(Syscalls.fstat(fd.value()));
            }
        } catch (LinuxException e) {
            return FileType.FILE;
        }
    }

    /**
     * Whether {@code name} is how the kernel names a file made with {@code O_TMPFILE} (the files
     * API writes through one before it links it in): {@code #<inode>}, which no directory holds.
     * Its writes are not a change anyone can see; its link is, as a create.
     */
    private boolean isUnnamedFile(String name, String path) {
        if (name.length() < 2 || name.charAt(0) != '#' || !name.substring(1).chars().allMatch(c -> c >= '0' && c <= '9')) return false;
        try (Fd fd = openBeneath(path, O_PATH | O_NOFOLLOW | O_CLOEXEC)) {
            return false; // a file really named so
        } catch (LinuxException e) {
            return e.is(Errno.ENOENT);
        }
    }

    private static Optional<FileType> typeOf(Fd dir, Syscalls.DirEntry entry) {
        return switch (entry.type()) {
            case DT_DIR -> Optional.of(FileType.DIRECTORY);
            case DT_REG -> Optional.of(FileType.FILE);
            case DT_LNK -> Optional.of(FileType.SYMLINK);
            case DT_UNKNOWN -> {
                try {
                    yield Optional.of(typeOf(Syscalls.statx(dir.value(), entry.name(), AT_SYMLINK_NOFOLLOW)));
                } catch (LinuxException e) {
                    if (e.is(Errno.ENOENT)) yield Optional.empty();
                    throw e;
                }
            }
            default -> Optional.of(FileType.OTHER);
        };
    }

    private static FileType typeOf(Stat stat) {
        return stat.isRegularFile() ? FileType.FILE
                : stat.isDirectory() ? FileType.DIRECTORY
                : stat.isSymlink() ? FileType.SYMLINK
                : FileType.OTHER;
    }

    private static boolean replacedOrGone(LinuxException e) {
        return e.is(Errno.ENOENT) || e.is(Errno.ENOTDIR) || e.is(Errno.ELOOP) || e.is(Errno.EXDEV);
    }

    // --- paths ---

    private static String join(String dir, String name) {
        return dir.isEmpty() ? name : dir + "/" + name;
    }

    /** A path relative to the base as the sandbox sees it. */
    private String shown(String relative) {
        if (relative.isEmpty()) return shownBase;
        return shownBase.equals("/") ? "/" + relative : shownBase + "/" + relative;
    }
}
