package io.stasis.blob.content;

import java.time.Duration;

/**
 * How the store-wide locks of {@link StoreLocks} age. Checked at once; a bad value is named.
 *
 * @param staleAfter  a lock object not rewritten for this long (by the backend's own clock: its
 *                    last-modified time against that of a lock just written) belongs to a holder
 *                    that is gone, and is ignored (default 30 minutes)
 * @param refreshEvery how often a holder rewrites its lock while it holds it (default 5 minutes);
 *                    at most a third of {@code staleAfter}
 * @param maxWait     how long an upload waits for another holder's collection to end before it
 *                    fails with {@code store_busy} (default 2 hours)
 */
public record LockTiming(Duration staleAfter, Duration refreshEvery, Duration maxWait) {
    public static final LockTiming DEFAULT = new LockTiming(Duration.ofMinutes(30), Duration.ofMinutes(5), Duration.ofHours(2));

    public LockTiming {
        if (staleAfter == null || staleAfter.compareTo(Duration.ofSeconds(1)) < 0)
            throw new IllegalArgumentException("staleAfter must be at least 1s, was " + staleAfter);
        if (refreshEvery == null || refreshEvery.isNegative() || refreshEvery.isZero() || refreshEvery.multipliedBy(3).compareTo(staleAfter) > 0)
            throw new IllegalArgumentException("refreshEvery must be positive and at most a third of staleAfter " + staleAfter + ", was " + refreshEvery);
        if (maxWait == null || maxWait.isNegative()) throw new IllegalArgumentException("maxWait must be zero or positive, was " + maxWait);
    }

    /**
     * How long after a successful refresh began a holder still trusts its lock: half of
     * {@code staleAfter}, so that a holder stops acting well before anyone may call its lock stale,
     * whatever the two clocks' rates and a call's latency.
     */
    Duration trustFor() {
        return staleAfter.dividedBy(2);
    }
}
