package io.stasis.core.ratelimit;

/**
 * How often something may happen: {@code perSecond} on average, and up to {@code burst} at once
 * after a quiet spell (a token bucket of {@code burst} tokens, refilled at {@code perSecond}).
 */
public record Rate(double perSecond, int burst) {
    public Rate {
        if (!(perSecond > 0) || Double.isInfinite(perSecond)) throw new IllegalArgumentException("a rate must be positive, was " + perSecond);
        if (burst < 1) throw new IllegalArgumentException("a burst must be 1 or more, was " + burst);
    }

    /** {@code n} a second, bursts of twice that: a client may catch up after a pause of a second. */
    public static Rate perSecond(int n) {
        return new Rate(n, Math.max(1, 2 * n));
    }

    /** {@code n} a minute, all of them at once if the minute was quiet. */
    public static Rate perMinute(int n) {
        return new Rate(n / 60.0, n);
    }
}
