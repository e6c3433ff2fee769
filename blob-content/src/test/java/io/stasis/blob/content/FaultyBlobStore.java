package io.stasis.blob.content;

import io.stasis.core.spi.BlobInfo;
import io.stasis.core.spi.BlobPage;
import io.stasis.core.spi.BlobStore;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real BlobStore with deliberate faults: the one fake these tests use. Hooks run before each
 * call (and, for list, after the real listing, so a paused GC holds a stale page) and may fail it
 * as a passing error, "kill the process" with {@link SimulatedCrash}, or hold it at a {@link Gate}.
 */
final class FaultyBlobStore implements BlobStore {
    /** {@code LIST} is heard once the page is read (a gate holds its result), {@code LIST_CALL} before it is asked for. */
    enum Op { PUT, GET, HEAD, LIST, LIST_CALL, DELETE }

    @FunctionalInterface
    interface Hook {
        void on(Op op, String key);
    }

    /** What a killed process looks like from inside: nothing after it runs. Not retried. */
    static final class SimulatedCrash extends Error {
        SimulatedCrash(Op op, String key) {
            super("simulated crash at " + op + " " + key);
        }
    }

    private final BlobStore real;
    private final List<Hook> hooks = new CopyOnWriteArrayList<>();
    private final Map<Op, AtomicInteger> calls = new ConcurrentHashMap<>();

    FaultyBlobStore(BlobStore real) {
        this.real = real;
    }

    FaultyBlobStore with(Hook hook) {
        hooks.add(hook);
        return this;
    }

    void clearHooks() {
        hooks.clear();
    }

    int calls(Op op) {
        return calls.computeIfAbsent(op, o -> new AtomicInteger()).get();
    }

    /** The first {@code times} calls of {@code op} on keys under {@code prefix} fail as a network would. */
    static Hook failFirst(Op op, String prefix, int times) {
        var left = new AtomicInteger(times);
        return (o, key) -> {
            if (o == op && key.startsWith(prefix) && left.getAndDecrement() > 0)
                throw new UncheckedIOException(new IOException("injected fault: " + op + " " + key));
        };
    }

    /** Every call of {@code op} under {@code prefix} fails as a network would. */
    static Hook failAlways(Op op, String prefix) {
        return failFirst(op, prefix, Integer.MAX_VALUE);
    }

    /** The process dies at the {@code nth} call of {@code op} under {@code prefix}: that call and every later one. */
    static Hook crashAt(Op op, String prefix, int nth) {
        var seen = new AtomicInteger();
        var dead = new AtomicBoolean();
        return (o, key) -> {
            if (o == op && key.startsWith(prefix) && seen.incrementAndGet() >= nth) dead.set(true);
            if (dead.get()) throw new SimulatedCrash(o, key);
        };
    }

    @Override
    public void put(String key, InputStream content, long length) {
        hook(Op.PUT, key);
        real.put(key, content, length);
    }

    @Override
    public Optional<InputStream> get(String key) {
        hook(Op.GET, key);
        return real.get(key);
    }

    @Override
    public Optional<BlobInfo> head(String key) {
        hook(Op.HEAD, key);
        return real.head(key);
    }

    @Override
    public BlobPage list(String prefix, Optional<String> pageToken, int maxKeys) {
        hook(Op.LIST_CALL, prefix);
        BlobPage page = real.list(prefix, pageToken, maxKeys);
        hook(Op.LIST, prefix);
        return page;
    }

    @Override
    public void delete(String key) {
        hook(Op.DELETE, key);
        real.delete(key);
    }

    @Override
    public void close() {
        real.close();
    }

    @Override
    public String toString() {
        return "faulty:" + real;
    }

    private void hook(Op op, String key) {
        calls.computeIfAbsent(op, o -> new AtomicInteger()).incrementAndGet();
        for (Hook h : hooks) h.on(op, key);
    }

    /**
     * Holds the first call of {@code op} under {@code prefix} until released, so that a test can
     * run something else at exactly that point. Waits are bounded so a broken test fails instead
     * of hanging.
     */
    static final class Gate implements Hook {
        private static final Duration LIMIT = Duration.ofSeconds(60);
        private final Op op;
        private final String prefix;
        private final CountDownLatch reached = new CountDownLatch(1);
        private final CountDownLatch released = new CountDownLatch(1);
        private final AtomicInteger passed = new AtomicInteger();

        Gate(Op op, String prefix) {
            this.op = op;
            this.prefix = prefix;
        }

        @Override
        public void on(Op o, String key) {
            if (o != op || !key.startsWith(prefix) || passed.getAndIncrement() > 0) return;
            reached.countDown();
            await(released, "the gate at " + op + " " + prefix + " to be released");
        }

        void awaitReached() {
            await(reached, "a call of " + op + " " + prefix);
        }

        void release() {
            released.countDown();
        }

        private static void await(CountDownLatch latch, String what) {
            try {
                if (!latch.await(LIMIT.toSeconds(), TimeUnit.SECONDS)) throw new AssertionError("gave up waiting for " + what);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting for " + what, e);
            }
        }
    }
}
