package io.stasis.core.concurrent;

import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;

/**
 * A fair read/write lock per key, the core's one keyed lock. A key's lock exists while a thread
 * holds or waits for it and goes with the last of them, so the map never grows with keys that
 * are done (deleted sandboxes, volumes, restored checkpoints), and no one has to forget a key: a
 * removal by hand would let a waiter on the old lock and a newcomer on a new one run together.
 * A hold is released by the thread that took it.
 */
public final class KeyedLock<K> {
    private final ConcurrentHashMap<K, Entry> entries = new ConcurrentHashMap<>();

    private static final class Entry {
        final ReentrantReadWriteLock lock = new ReentrantReadWriteLock(true);
        int users; // changed only inside the map's compute for this key
    }

    /** A key held until closed, by the thread that took it. */
    public interface Held extends AutoCloseable {
        @Override
        void close();
    }

    public <T> T exclusive(K key, Supplier<T> action) {
        try (var held = hold(key, true)) {
            return action.get();
        }
    }

    public <T> T shared(K key, Supplier<T> action) {
        try (var held = hold(key, false)) {
            return action.get();
        }
    }

    /** Holds the key exclusively, waiting for others to let it go. */
    public Held exclusive(K key) {
        return hold(key, true);
    }

    /** Holds the key exclusively if no other thread holds it or waits for it, at once; empty otherwise. */
    public Optional<Held> tryExclusive(K key) {
        var entry = join(key);
        var lock = entry.lock.writeLock();
        if (lock.tryLock()) return Optional.of(release(key, lock));
        leave(key);
        return Optional.empty();
    }

    /** How many keys are held or waited for now. */
    public int keysInUse() {
        return entries.size();
    }

    private Held hold(K key, boolean exclusive) {
        var entry = join(key);
        Lock lock = exclusive ? entry.lock.writeLock() : entry.lock.readLock();
        try {
            lock.lock();
        } catch (RuntimeException | Error e) {
            leave(key);
            throw e;
        }
        return release(key, lock);
    }

    private Held release(K key, Lock lock) {
        return new Held() {
            private boolean closed;

            @Override
            public void close() {
                if (closed) return;
                closed = true;
                lock.unlock();
                leave(key);
            }
        };
    }

    private Entry join(K key) {
        return entries.compute(key, (k, entry) -> {
            var joined = entry == null ? new Entry() : entry;
            joined.users++;
            return joined;
        });
    }

    private void leave(K key) {
        entries.computeIfPresent(key, (k, entry) -> --entry.users == 0 ? null : entry);
    }
}
