package io.stasis.core.policy;

import io.stasis.core.sandbox.SandboxState;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * Decides where an idle sandbox goes next: a pure function of its policy, state, age and how long
 * it has been idle. The deepest step whose time has come wins (a sandbox idle for an hour with
 * pause at 15 s and hibernate at 10 m is hibernated, not paused), and a step never moves a
 * sandbox up the ladder.
 */
public final class IdlePolicy {
    private IdlePolicy() {
    }

    public enum Action { PAUSE, STANDBY, HIBERNATE, STOP, DELETE }

    /** What to do, and why: {@code idle} or {@code ttl} (the sandbox outlived {@code maxAge}). */
    public record Decision(Action action, String reason) {
    }

    public static Optional<Decision> decide(LifecyclePolicy policy, SandboxState state, Instant createdAt, Instant idleSince, Instant now) {
        if (state instanceof SandboxState.Deleted) return Optional.empty();
        if (reached(policy.maxAge(), Duration.between(createdAt, now))) return Optional.of(new Decision(Action.DELETE, "ttl"));
        Duration idle = Duration.between(idleSince, now);
        if (reached(policy.deleteAfterIdle(), idle)) return Optional.of(new Decision(Action.DELETE, "idle"));
        int depth = depth(state);
        if (reached(policy.stopAfterIdle(), idle) && depth < 4) return Optional.of(new Decision(Action.STOP, "idle"));
        if (reached(policy.hibernateAfterIdle(), idle) && depth < 3) return Optional.of(new Decision(Action.HIBERNATE, "idle"));
        if (reached(policy.standbyAfterIdle(), idle) && depth < 2) return Optional.of(new Decision(Action.STANDBY, "idle"));
        if (reached(policy.pauseAfterIdle(), idle) && depth < 1) return Optional.of(new Decision(Action.PAUSE, "idle"));
        return Optional.empty();
    }

    private static boolean reached(Optional<Duration> limit, Duration elapsed) {
        return limit.isPresent() && elapsed.compareTo(limit.get()) >= 0;
    }

    /** How far down the ladder a state is: running 0, paused 1, standby 2, hibernated 3, stopped 4. */
    static int depth(SandboxState state) {
        return switch (state) {
            case SandboxState.Running r -> 0;
            case SandboxState.Paused p -> 1;
            case SandboxState.Standby s -> 2;
            case SandboxState.Hibernated h -> 3;
            case SandboxState.Stopped s -> 4;
            case SandboxState.Deleted d -> 5;
        };
    }
}
