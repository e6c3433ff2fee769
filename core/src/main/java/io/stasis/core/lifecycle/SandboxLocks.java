package io.stasis.core.lifecycle;

import io.stasis.core.sandbox.SandboxId;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;

/**
 * One read/write lock per sandbox. State changes (pause, hibernate, delete...) take it
 * exclusively; calls that use a sandbox as it is (starting a process) share it, so a state change
 * never runs under a process being started.
 */
public final class SandboxLocks {
    private final ConcurrentHashMap<SandboxId, ReentrantReadWriteLock> locks = new ConcurrentHashMap<>();

    private ReentrantReadWriteLock lock(SandboxId id) {
        return locks.computeIfAbsent(id, k -> new ReentrantReadWriteLock(true));
    }

    public <T> T exclusive(SandboxId id, Supplier<T> action) {
        var lock = lock(id).writeLock();
        lock.lock();
        try {
            return action.get();
        } finally {
            lock.unlock();
        }
    }

    public <T> T shared(SandboxId id, Supplier<T> action) {
        var lock = lock(id).readLock();
        lock.lock();
        try {
            return action.get();
        } finally {
            lock.unlock();
        }
    }

    void forget(SandboxId id) {
        locks.remove(id);
    }
}
