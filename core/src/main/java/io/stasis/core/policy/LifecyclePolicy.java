package io.stasis.core.policy;

import io.stasis.core.error.StasisException;
import java.time.Duration;
import java.util.Optional;

/**
 * When an idle sandbox moves down the ladder (running -> paused -> hibernated -> stopped ->
 * deleted), and whether calls wake it. Each step counts from the last activity; an empty duration
 * means never. {@code maxAge} deletes a sandbox that old whatever it does (reason {@code ttl}).
 */
public record LifecyclePolicy(Optional<Duration> pauseAfterIdle, Optional<Duration> hibernateAfterIdle,
                              Optional<Duration> stopAfterIdle, Optional<Duration> deleteAfterIdle,
                              Optional<Duration> maxAge, boolean autoResume) {

    public static final LifecyclePolicy DEFAULT = new LifecyclePolicy(Optional.of(Duration.ofSeconds(15)),
            Optional.of(Duration.ofMinutes(10)), Optional.empty(), Optional.of(Duration.ofDays(30)), Optional.empty(), true);

    public LifecyclePolicy {
        check("pauseAfterIdle", pauseAfterIdle);
        check("hibernateAfterIdle", hibernateAfterIdle);
        check("stopAfterIdle", stopAfterIdle);
        check("deleteAfterIdle", deleteAfterIdle);
        check("maxAge", maxAge);
    }

    private static void check(String field, Optional<Duration> d) {
        if (d.isPresent() && (d.get().isNegative() || d.get().isZero()))
            throw StasisException.invalid("lifecycle." + field, "must be a positive duration or null");
    }
}
