package io.stasis.core.lifecycle;

import io.stasis.core.sandbox.SandboxId;
import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What the idle policy needs to know about use of a sandbox: when an API call last touched it, and
 * how many streams or waiting calls are attached to it right now. In memory: after a restart of
 * the service every sandbox counts as active from that moment.
 */
public final class ActivityTracker {
    private final Clock clock;
    private final Instant startedAt;
    private final Map<SandboxId, Instant> lastActivity = new ConcurrentHashMap<>();
    private final Map<SandboxId, AtomicInteger> attached = new ConcurrentHashMap<>();

    public ActivityTracker(Clock clock) {
        this.clock = clock;
        this.startedAt = clock.instant();
    }

    /** An API call used the sandbox now. */
    public void touch(SandboxId id) {
        lastActivity.put(id, clock.instant());
    }

    /** Something waits on the sandbox (a stream, a running exec) until the returned handle closes. */
    public Attachment attach(SandboxId id) {
        touch(id);
        attached.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
        return () -> {
            touch(id);
            attached.get(id).decrementAndGet();
        };
    }

    public boolean isAttached(SandboxId id) {
        var count = attached.get(id);
        return count != null && count.get() > 0;
    }

    /** When the sandbox was last used, or when the service started if not since. */
    public Instant lastActivity(SandboxId id) {
        return lastActivity.getOrDefault(id, startedAt);
    }

    void forget(SandboxId id) {
        lastActivity.remove(id);
        attached.remove(id);
    }

    /** Closing detaches; it never fails. */
    @FunctionalInterface
    public interface Attachment extends AutoCloseable {
        @Override
        void close();
    }
}
