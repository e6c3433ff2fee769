package io.stasis.core.ratelimit;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/**
 * Token buckets by key (a credential, a tenant, a tenant's creates), in this process's memory: each
 * node of a cluster limits what it serves. A request takes one token from each bucket it is
 * counted in, all or none, so a refusal by one limit costs the others nothing.
 * <p>A bucket that has filled up again holds no information (a new one starts full), so full ones
 * are dropped now and then: the map holds the keys that were busy lately, not every key ever seen.
 */
public final class RateLimiter {
    /** One bucket a request is counted in: its key and the rate it is held to (which may change between requests). */
    public record Limit(String key, Rate rate) {
    }

    /** A request refused: the keys of the buckets that had no token, and how long until all of the request's would. */
    public record Refusal(List<String> keys, Duration retryAfter) {
        public Refusal {
            keys = List.copyOf(keys);
        }
    }

    /** Buckets are swept for full ones once this many are held, and again each time that many more are. */
    private static final int SWEEP_AT = 4096;

    private final LongSupplier nanoClock;
    private final ReentrantLock lock = new ReentrantLock();
    private final Map<String, Bucket> buckets = new HashMap<>();
    private int sweepAt = SWEEP_AT;

    public RateLimiter() {
        this(System::nanoTime);
    }

    /** @param nanoClock a monotonic clock in nanoseconds (tests give their own) */
    public RateLimiter(LongSupplier nanoClock) {
        this.nanoClock = nanoClock;
    }

    /**
     * Takes a token from each of {@code limits}' buckets if every one has one; otherwise takes none
     * and answers which had none and how long until all of them would.
     */
    public Optional<Refusal> take(List<Limit> limits) {
        if (limits.isEmpty()) return Optional.empty();
        long now = nanoClock.getAsLong();
        lock.lock();
        try {
            double waitSeconds = 0;
            var empty = new ArrayList<String>();
            for (Limit limit : limits) {
                var bucket = buckets.computeIfAbsent(limit.key(), key -> new Bucket(limit.rate().burst(), now));
                bucket.refill(limit.rate(), now);
                if (bucket.tokens >= 1) continue;
                empty.add(limit.key());
                waitSeconds = Math.max(waitSeconds, (1 - bucket.tokens) / limit.rate().perSecond());
            }
            if (!empty.isEmpty()) return Optional.of(new Refusal(empty, Duration.ofNanos((long) Math.ceil(waitSeconds * 1e9))));
            for (Limit limit : limits) buckets.get(limit.key()).tokens -= 1;
            if (buckets.size() >= sweepAt) sweep(now);
            return Optional.empty();
        } finally {
            lock.unlock();
        }
    }

    /** How many buckets are held (for tests). */
    int size() {
        lock.lock();
        try {
            return buckets.size();
        } finally {
            lock.unlock();
        }
    }

    /** Drops the buckets that have filled up again (as of their own last rate). Holds the lock. */
    private void sweep(long now) {
        buckets.values().removeIf(bucket -> bucket.fullAt(now));
        sweepAt = Math.max(SWEEP_AT, buckets.size() + SWEEP_AT);
    }

    private static final class Bucket {
        double tokens;
        long refilledAt;
        Rate rate;

        Bucket(int tokens, long now) {
            this.tokens = tokens;
            this.refilledAt = now;
        }

        void refill(Rate current, long now) {
            rate = current;
            tokens = Math.min(current.burst(), tokens + (now - refilledAt) / 1e9 * current.perSecond());
            refilledAt = now;
        }

        boolean fullAt(long now) {
            return rate == null || tokens + (now - refilledAt) / 1e9 * rate.perSecond() >= rate.burst();
        }
    }
}
