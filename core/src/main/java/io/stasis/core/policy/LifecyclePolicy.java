package io.stasis.core.policy;

import io.stasis.core.error.StasisException;
import java.time.Duration;
import java.util.Optional;

/**
 * When an idle sandbox moves down the ladder (running -> paused -> standby -> hibernated -> stopped
 * -> deleted), and whether calls wake it. Each step counts from the last activity; an empty duration
 * means never. {@code maxAge} deletes a sandbox that old whatever it does (reason {@code ttl}).
 * {@code checkpointEvery} (the API's {@code durability}) keeps a sandbox with processes restorable
 * on another node: a durable checkpoint with memory at most that old (see DurabilityKeeper).
 */
public record LifecyclePolicy(Optional<Duration> pauseAfterIdle, Optional<Duration> standbyAfterIdle, Optional<Duration> hibernateAfterIdle,
                              Optional<Duration> stopAfterIdle, Optional<Duration> deleteAfterIdle,
                              Optional<Duration> maxAge, boolean autoResume, Optional<Duration> checkpointEvery) {

    /**
     * Pause after 15 s (back in a millisecond), standby after 2 min (RAM given back, back in ~10 ms),
     * hibernate after 1 h (a durable image that survives a host reboot), delete after 30 days.
     */
    public static final LifecyclePolicy DEFAULT = new LifecyclePolicy(Optional.of(Duration.ofSeconds(15)),
            Optional.of(Duration.ofMinutes(2)), Optional.of(Duration.ofHours(1)), Optional.empty(), Optional.of(Duration.ofDays(30)),
            Optional.empty(), true, Optional.empty());

    public LifecyclePolicy {
        check("pauseAfterIdle", pauseAfterIdle);
        check("standbyAfterIdle", standbyAfterIdle);
        check("hibernateAfterIdle", hibernateAfterIdle);
        check("stopAfterIdle", stopAfterIdle);
        check("deleteAfterIdle", deleteAfterIdle);
        check("maxAge", maxAge);
        check("checkpointEvery", checkpointEvery);
    }

    /** The same policy with another durability period. */
    public LifecyclePolicy withCheckpointEvery(Optional<Duration> period) {
        return new LifecyclePolicy(pauseAfterIdle, standbyAfterIdle, hibernateAfterIdle, stopAfterIdle, deleteAfterIdle, maxAge, autoResume, period);
    }

    private static void check(String field, Optional<Duration> d) {
        if (d.isPresent() && (d.get().isNegative() || d.get().isZero()))
            throw StasisException.invalid("lifecycle." + field, "must be a positive duration or null");
    }
}
