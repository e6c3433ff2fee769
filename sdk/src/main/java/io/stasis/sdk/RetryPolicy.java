package io.stasis.sdk;

import java.time.Duration;
import java.util.Objects;

/**
 * How often, and for how long, the client repeats an idempotent call that failed in a way that
 * may pass: the connection could not be made or broke before the response, or the server
 * answered 502, 503 or 504 (a proxy or a busy host), or 429 (with {@code Retry-After} honoured).
 * Idempotent calls are GET, HEAD, PUT and DELETE, plus the lifecycle actions (pause, resume,
 * hibernate, stop, start), which the API defines as idempotent. Other POSTs (create, exec, fork,
 * signal, ...) are sent once. Streams are not retried here: they reconnect on their own.
 *
 * <p>Pauses double from {@code firstBackoff} up to {@code maxBackoff}, each one a random time
 * between half and all of that (jitter, so clients do not retry in lockstep). Once
 * {@code maxAttempts} attempts failed, or the next pause would end after {@code maxElapsed}
 * since the first attempt, the last error is thrown.
 *
 * <pre>{@code
 * StasisClient client = StasisClient.builder()
 *         .url(System.getenv("STASIS_URL"))
 *         .retryPolicy(RetryPolicy.defaults().withMaxAttempts(5).withMaxElapsed(Duration.ofMinutes(1)))
 *         .build();
 * }</pre>
 *
 * @param maxAttempts  attempts in all, 1 for no retries
 * @param maxElapsed   no new attempt starts this long after the first one
 * @param firstBackoff the pause before the second attempt (before jitter)
 * @param maxBackoff   the longest pause chosen by backoff; a longer {@code Retry-After} is still honoured
 */
public record RetryPolicy(int maxAttempts, Duration maxElapsed, Duration firstBackoff, Duration maxBackoff) {
    public RetryPolicy {
        if (maxAttempts < 1) throw new IllegalArgumentException("maxAttempts must be at least 1, was " + maxAttempts);
        Objects.requireNonNull(maxElapsed, "maxElapsed");
        Objects.requireNonNull(firstBackoff, "firstBackoff");
        Objects.requireNonNull(maxBackoff, "maxBackoff");
        if (maxElapsed.isNegative()) throw new IllegalArgumentException("maxElapsed is negative: " + maxElapsed);
        if (firstBackoff.isNegative()) throw new IllegalArgumentException("firstBackoff is negative: " + firstBackoff);
        if (maxBackoff.compareTo(firstBackoff) < 0) {
            throw new IllegalArgumentException("maxBackoff " + maxBackoff + " is shorter than firstBackoff " + firstBackoff);
        }
    }

    /** 3 attempts within 30 s, pausing 200 ms, then 400 ms (up to 5 s). */
    public static RetryPolicy defaults() {
        return new RetryPolicy(3, Duration.ofSeconds(30), Duration.ofMillis(200), Duration.ofSeconds(5));
    }

    /** Every call is sent once. */
    public static RetryPolicy none() {
        return new RetryPolicy(1, Duration.ZERO, Duration.ZERO, Duration.ZERO);
    }

    public RetryPolicy withMaxAttempts(int attempts) {
        return new RetryPolicy(attempts, maxElapsed, firstBackoff, maxBackoff);
    }

    public RetryPolicy withMaxElapsed(Duration elapsed) {
        return new RetryPolicy(maxAttempts, elapsed, firstBackoff, maxBackoff);
    }

    /** The first pause and the longest one chosen by backoff. */
    public RetryPolicy withBackoff(Duration first, Duration max) {
        return new RetryPolicy(maxAttempts, maxElapsed, first, max);
    }

    /** The pause before attempt {@code attempt + 1} (1-based), before jitter. */
    Duration backoff(int attempt) {
        long first = firstBackoff.toNanos();
        long nanos = first << Math.min(attempt - 1, 20);
        if (nanos < first) nanos = Long.MAX_VALUE; // overflow
        return Duration.ofNanos(Math.min(nanos, maxBackoff.toNanos()));
    }
}
