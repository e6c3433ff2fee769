package io.stasis.blob.content;

import java.time.Duration;

/**
 * How often and how patiently a backend call that failed for a passing reason (an
 * {@link java.io.UncheckedIOException} from the {@code BlobStore}) is tried again: exponential
 * backoff from {@code firstBackoff}, doubling up to {@code maxBackoff}, with jitter so that
 * parallel uploads do not retry in lockstep.
 *
 * @param maxAttempts  tries in all, at least 1 (default 6)
 * @param firstBackoff the wait after the first failure (default 200 ms)
 * @param maxBackoff   the longest wait (default 10 s); with the defaults a call gives up after about 17 s
 */
public record RetryPolicy(int maxAttempts, Duration firstBackoff, Duration maxBackoff) {
    public static final RetryPolicy DEFAULT = new RetryPolicy(6, Duration.ofMillis(200), Duration.ofSeconds(10));

    public RetryPolicy {
        if (maxAttempts < 1) throw new IllegalArgumentException("maxAttempts must be at least 1, was " + maxAttempts);
        if (firstBackoff == null || firstBackoff.isNegative())
            throw new IllegalArgumentException("firstBackoff must be zero or positive, was " + firstBackoff);
        if (maxBackoff == null || maxBackoff.compareTo(firstBackoff) < 0)
            throw new IllegalArgumentException("maxBackoff must be at least firstBackoff " + firstBackoff + ", was " + maxBackoff);
    }

    /** The wait after failed attempt {@code attempt} (1-based), before jitter. */
    Duration backoff(int attempt) {
        long millis = firstBackoff.toMillis();
        for (int i = 1; i < attempt && millis < maxBackoff.toMillis(); i++) millis *= 2;
        return Duration.ofMillis(Math.min(millis, maxBackoff.toMillis()));
    }
}
