package io.stasis.core.policy;

import io.stasis.core.error.StasisException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * When an idle sandbox moves down the ladder (running -> paused -> standby -> hibernated -> stopped
 * -> deleted), and whether calls wake it. Each step counts from the last activity; an empty duration
 * means never. {@code maxAge} deletes a sandbox that old whatever it does (reason {@code ttl}).
 * {@code checkpointEvery} (the API's {@code durability}) keeps a sandbox with processes restorable
 * on another node: a durable checkpoint with memory at most that old (see DurabilityKeeper).
 *
 * <p>{@code atMaxAge} is what {@code maxAge} does: delete (the default), or put the sandbox to sleep
 * (pause, standby, hibernate, stop), which is E2B's "pause at timeout". A sandbox that its age put
 * to sleep gets {@code wakeFor} more when it wakes (resume, auto-resume): its {@code maxAge} becomes
 * its age then plus {@code wakeFor}, or no limit at all when {@code wakeFor} is empty.
 */
public record LifecyclePolicy(Optional<Duration> pauseAfterIdle, Optional<Duration> standbyAfterIdle, Optional<Duration> hibernateAfterIdle,
                              Optional<Duration> stopAfterIdle, Optional<Duration> deleteAfterIdle,
                              Optional<Duration> maxAge, boolean autoResume, Optional<Duration> checkpointEvery,
                              IdlePolicy.Action atMaxAge, Optional<Duration> wakeFor) {

    /**
     * Pause after 15 s (back in a millisecond), standby after 2 min (RAM given back, back in ~10 ms),
     * hibernate after 1 h (a durable image that survives a host reboot), delete after 30 days.
     */
    public static final LifecyclePolicy DEFAULT = new LifecyclePolicy(Optional.of(Duration.ofSeconds(15)),
            Optional.of(Duration.ofMinutes(2)), Optional.of(Duration.ofHours(1)), Optional.empty(), Optional.of(Duration.ofDays(30)),
            Optional.empty(), true, Optional.empty());

    /** A policy whose {@code maxAge} deletes. */
    public LifecyclePolicy(Optional<Duration> pauseAfterIdle, Optional<Duration> standbyAfterIdle, Optional<Duration> hibernateAfterIdle,
                           Optional<Duration> stopAfterIdle, Optional<Duration> deleteAfterIdle, Optional<Duration> maxAge, boolean autoResume,
                           Optional<Duration> checkpointEvery) {
        this(pauseAfterIdle, standbyAfterIdle, hibernateAfterIdle, stopAfterIdle, deleteAfterIdle, maxAge, autoResume, checkpointEvery,
                IdlePolicy.Action.DELETE, Optional.empty());
    }

    public LifecyclePolicy {
        Objects.requireNonNull(atMaxAge, "atMaxAge");
        check("pauseAfterIdle", pauseAfterIdle);
        check("standbyAfterIdle", standbyAfterIdle);
        check("hibernateAfterIdle", hibernateAfterIdle);
        check("stopAfterIdle", stopAfterIdle);
        check("deleteAfterIdle", deleteAfterIdle);
        check("maxAge", maxAge);
        check("checkpointEvery", checkpointEvery);
        check("wakeFor", wakeFor);
    }

    /** The same policy with another durability period. */
    public LifecyclePolicy withCheckpointEvery(Optional<Duration> period) {
        return new LifecyclePolicy(pauseAfterIdle, standbyAfterIdle, hibernateAfterIdle, stopAfterIdle, deleteAfterIdle, maxAge, autoResume, period,
                atMaxAge, wakeFor);
    }

    /** The same policy with another age limit, and what reaching it does. */
    public LifecyclePolicy withMaxAge(Optional<Duration> age, IdlePolicy.Action action, Optional<Duration> wake) {
        return new LifecyclePolicy(pauseAfterIdle, standbyAfterIdle, hibernateAfterIdle, stopAfterIdle, deleteAfterIdle, age, autoResume,
                checkpointEvery, action, wake);
    }

    /** Whether a sandbox this old has reached its age limit. */
    public boolean reachedMaxAge(Duration age) {
        return maxAge.isPresent() && age.compareTo(maxAge.get()) >= 0;
    }

    /**
     * The policy of a sandbox that wakes at {@code age}: if its age limit put it to sleep, the limit
     * moves {@code wakeFor} past now (or goes); otherwise it is unchanged.
     */
    public LifecyclePolicy wokenAt(Duration age) {
        if (atMaxAge == IdlePolicy.Action.DELETE || !reachedMaxAge(age)) return this;
        return withMaxAge(wakeFor.map(age::plus), atMaxAge, wakeFor);
    }

    private static void check(String field, Optional<Duration> d) {
        if (d.isPresent() && (d.get().isNegative() || d.get().isZero()))
            throw StasisException.invalid("lifecycle." + field, "must be a positive duration or null");
    }
}
