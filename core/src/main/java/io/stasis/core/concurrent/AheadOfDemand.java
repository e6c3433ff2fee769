package io.stasis.core.concurrent;

/**
 * Work done ahead of demand (a warm sandbox's start, a fork spare's restore): while it runs in
 * {@link #call}, the host tools it starts run at a lower CPU weight than those of the calls of the
 * moment (the host's tool runner asks {@link #now}), so a fork or a create that comes meanwhile does
 * not wait behind the refill it would benefit from next. It covers the calling thread only: a
 * thread that work starts is not ahead of demand.
 */
public final class AheadOfDemand {
    private static final ScopedValue<Boolean> ACTIVE = ScopedValue.newInstance();

    private AheadOfDemand() {
    }

    /** Runs {@code work} ahead of demand and returns what it returns. */
    public static <T, X extends Throwable> T call(ScopedValue.CallableOp<? extends T, X> work) throws X {
        return ScopedValue.where(ACTIVE, true).call(work);
    }

    /** Whether the current thread's work is ahead of demand. */
    public static boolean now() {
        return ACTIVE.orElse(false);
    }
}
