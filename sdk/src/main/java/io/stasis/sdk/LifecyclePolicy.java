package io.stasis.sdk;

import java.time.Duration;

/**
 * A sandbox's idle policy as the server reports it. A null duration means never. A sandbox is
 * idle when no API call touched it, nothing is attached to it and its processes use almost no
 * CPU; the deepest step that is due wins. Change it with {@link Sandbox#updateLifecycle}.
 *
 * @param pauseAfterIdle     idle this long: pause (server default 15 s)
 * @param standbyAfterIdle   idle this long: standby, its memory given back to the host (default 2 min)
 * @param hibernateAfterIdle idle this long: hibernate (default 1 h)
 * @param stopAfterIdle      idle this long: stop (default never)
 * @param deleteAfterIdle    idle this long: delete (default 30 days)
 * @param maxAge             this old: {@code atMaxAge}, busy or not (default never)
 * @param atMaxAge           what {@code maxAge} does: {@code delete} (default), or a sleep: {@code pause},
 *                           {@code standby}, {@code hibernate}, {@code stop}
 * @param wakeFor            when a sandbox its age put to sleep wakes, {@code maxAge} moves this far past
 *                           its age then (null: the age limit goes)
 * @param autoResume         whether exec and file calls wake a paused, standby or hibernated sandbox
 *                           (default true); when false they get {@code invalid_state}
 */
public record LifecyclePolicy(Duration pauseAfterIdle, Duration standbyAfterIdle, Duration hibernateAfterIdle, Duration stopAfterIdle,
                              Duration deleteAfterIdle, Duration maxAge, String atMaxAge, Duration wakeFor, boolean autoResume) {
}
