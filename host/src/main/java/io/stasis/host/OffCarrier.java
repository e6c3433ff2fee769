package io.stasis.host;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Runs work that blocks its thread inside native code for long on a platform thread, when called
 * from a virtual one, and waits there. A virtual thread in a native call (an FFM downcall, or JNI
 * such as {@link ProcessBuilder#start}, which the JDK does not compensate for as it does for file
 * I/O) holds its carrier thread, and there are only as many carriers as cores: every other virtual
 * thread of the service, each API call, waits for a free one. Measured in a crowd of 200 sandboxes
 * with 10 lifecycles churning, on 2 cores: btrfs ioctls that commit a transaction and the opens of
 * their directories blocked 5-175 ms each, ~20 s in all in a 40 s run, and process starts 5-160 ms
 * each, ~11 s in all; GETs and execs of idle sandboxes waited behind them.
 *
 * <p>The work runs to its end even if the caller is interrupted meanwhile, whose interrupt is kept
 * for it: a change half made must not be taken for one not made. What the work throws, the caller
 * gets as it is.
 */
public final class OffCarrier {
    /** Platform threads, made as needed and kept a minute when idle. */
    private static final ExecutorService THREADS = Executors.newCachedThreadPool(Thread.ofPlatform().daemon().name("stasis-blocking-", 0).factory());

    private OffCarrier() {
    }

    /** Work with a result that may throw {@code E}. */
    @FunctionalInterface
    public interface Work<T, E extends Exception> {
        T run() throws E;
    }

    /** Work without a result that may throw {@code E}. */
    @FunctionalInterface
    public interface Action<E extends Exception> {
        void run() throws E;
    }

    /** Runs {@code work} off the carriers (where the caller is a virtual thread) and returns its result. */
    public static <T, E extends Exception> T call(Work<T, E> work) throws E {
        if (!Thread.currentThread().isVirtual()) return work.run();
        Future<T> done = THREADS.submit(work::run);
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return done.get();
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    throw OffCarrier.<E>asThrown(e.getCause());
                }
            }
        } finally {
            if (interrupted) Thread.currentThread().interrupt();
        }
    }

    /** {@link #call} for work without a result. */
    public static <E extends Exception> void run(Action<E> action) throws E {
        call(() -> {
            action.run();
            return null;
        });
    }

    /** What the work threw, as the work's own type: only {@code E} or an unchecked one can come from it. */
    @SuppressWarnings("unchecked")
    private static <E extends Exception> E asThrown(Throwable thrown) {
        if (thrown instanceof RuntimeException unchecked) throw unchecked;
        if (thrown instanceof Error error) throw error;
        return (E) thrown;
    }
}
