package io.stasis.core.lifecycle;

import io.stasis.core.sandbox.SandboxId;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/** One lock per sandbox, so that lifecycle changes of one sandbox never interleave. */
final class SandboxLocks {
    private final ConcurrentHashMap<SandboxId, ReentrantLock> locks = new ConcurrentHashMap<>();

    <T> T with(SandboxId id, Supplier<T> action) {
        var lock = locks.computeIfAbsent(id, k -> new ReentrantLock());
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
