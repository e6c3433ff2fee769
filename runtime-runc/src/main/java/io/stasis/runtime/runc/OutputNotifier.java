package io.stasis.runtime.runc;

import io.stasis.fs.linux.ConfinedRoot;
import io.stasis.fs.linux.Syscalls;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Wakes whoever follows a process's output as soon as the files stasis-init keeps for it change
 * (output appended, the exit file renamed into place), instead of leaving them to poll: one inotify
 * instance and one thread for the whole service, however many followers. When a watch cannot be
 * added, {@link Subscription#await} simply times out and followers fall back to polling.
 */
final class OutputNotifier implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(OutputNotifier.class);
    private static final int MASK = Syscalls.IN_MODIFY | Syscalls.IN_CLOSE_WRITE | Syscalls.IN_MOVED_TO | Syscalls.IN_CREATE
            | Syscalls.IN_DELETE_SELF;

    private final int inotify;
    private final int wakeUp;
    private final Map<Integer, Directory> watched = new HashMap<>(); // guarded by this
    private final Thread thread;
    private volatile boolean closed;

    /** One watched directory, shared by its subscribers; its generation counts the changes seen. */
    private static final class Directory {
        final int wd;
        int subscribers;
        long generation;
        volatile boolean gone;

        Directory(int wd) {
            this.wd = wd;
        }

        synchronized void changed(boolean removed) {
            generation++;
            gone |= removed;
            notifyAll();
        }
    }

    OutputNotifier() {
        inotify = Syscalls.inotifyInit();
        wakeUp = Syscalls.eventfd();
        thread = Thread.ofPlatform().daemon().name("output-notifier").start(this::run);
    }

    /** Starts watching a process's directory inside a sandbox root. */
    Subscription subscribe(ConfinedRoot root, String dir) {
        if (closed) return new Subscription(null);
        try {
            synchronized (this) {
                int wd = root.addInotifyWatch(inotify, dir, MASK);
                var directory = watched.computeIfAbsent(wd, Directory::new);
                directory.subscribers++;
                return new Subscription(directory);
            }
        } catch (RuntimeException e) {
            log.atDebug().addKeyValue("dir", dir).setCause(e).log("cannot watch process output; followers poll");
            return new Subscription(null);
        }
    }

    private synchronized void release(Directory directory) {
        if (--directory.subscribers > 0 || directory.gone) return;
        watched.remove(directory.wd);
        try {
            Syscalls.inotifyRemoveWatch(inotify, directory.wd);
        } catch (RuntimeException e) {
            log.atDebug().addKeyValue("wd", directory.wd).log("watch already gone");
        }
    }

    private void run() {
        while (!closed) {
            try {
                Syscalls.pollReadable(-1, inotify, wakeUp);
                for (var events = Syscalls.readInotifyEvents(inotify); !events.isEmpty(); events = Syscalls.readInotifyEvents(inotify)) {
                    for (var event : events) {
                        Directory directory;
                        synchronized (this) {
                            directory = watched.get(event.wd());
                            if (directory != null && event.has(Syscalls.IN_IGNORED)) watched.remove(event.wd());
                        }
                        if (directory != null) directory.changed(event.has(Syscalls.IN_IGNORED));
                    }
                }
            } catch (RuntimeException e) {
                if (!closed) log.atWarn().setCause(e).log("output notifier failed; followers poll");
                return;
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        Syscalls.signalEventfd(wakeUp);
        try {
            thread.join(Duration.ofSeconds(2));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        Syscalls.close(inotify);
        Syscalls.close(wakeUp);
    }

    /** One follower's view of a watched directory. Not thread-safe; one owner. */
    final class Subscription implements AutoCloseable {
        private final Directory directory;
        private long seen;

        private Subscription(Directory directory) {
            this.directory = directory;
            if (directory != null) {
                synchronized (directory) {
                    seen = directory.generation;
                }
            }
        }

        /** Whether changes wake {@link #await} (false: the watch could not be added or has gone). */
        boolean live() {
            return directory != null && !directory.gone;
        }

        /**
         * Waits until something changed in the directory since the previous call returned (or since
         * the subscription began), or until {@code timeout}. Returns whether something changed.
         */
        boolean await(Duration timeout) throws InterruptedException {
            if (directory == null || directory.gone) {
                Thread.sleep(timeout);
                return false;
            }
            long deadline = System.nanoTime() + timeout.toNanos();
            synchronized (directory) {
                while (directory.generation == seen && !directory.gone) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) return false;
                    directory.wait(left / 1_000_000, (int) (left % 1_000_000));
                }
                seen = directory.generation;
                return true;
            }
        }

        @Override
        public void close() {
            if (directory != null) release(directory);
        }
    }
}
