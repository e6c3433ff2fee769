package io.stasis.core.policy;

import io.stasis.core.sandbox.SandboxState;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
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

    /** The steps, in the ladder's order (each leaves a sandbox deeper than the one before). */
    public enum Action {
        PAUSE, STANDBY, HIBERNATE, STOP, DELETE;

        /** The name on the wire and in the catalog: {@code "standby"}. */
        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }

        public static Optional<Action> byWireName(String name) {
            for (var action : values()) if (action.wireName().equals(name)) return Optional.of(action);
            return Optional.empty();
        }
    }

    /** What to do, and why: {@code idle} or {@code ttl} (the sandbox outlived {@code maxAge}). */
    public record Decision(Action action, String reason) {
    }

    public static Optional<Decision> decide(LifecyclePolicy policy, SandboxState state, Instant createdAt, Instant idleSince, Instant now) {
        if (state instanceof SandboxState.Deleted) return Optional.empty();
        int depth = depth(state);
        if (policy.reachedMaxAge(Duration.between(createdAt, now))) {
            // A sleeping age limit acts once: a sandbox at that depth or deeper goes on down the idle ladder.
            if (policy.atMaxAge() == Action.DELETE || depth < depth(policy.atMaxAge())) return Optional.of(new Decision(policy.atMaxAge(), "ttl"));
        }
        Duration idle = Duration.between(idleSince, now);
        if (reached(policy.deleteAfterIdle(), idle)) return Optional.of(new Decision(Action.DELETE, "idle"));
        if (reached(policy.stopAfterIdle(), idle) && depth < 4) return Optional.of(new Decision(Action.STOP, "idle"));
        if (reached(policy.hibernateAfterIdle(), idle) && depth < 3) return Optional.of(new Decision(Action.HIBERNATE, "idle"));
        if (reached(policy.standbyAfterIdle(), idle) && depth < 2) return Optional.of(new Decision(Action.STANDBY, "idle"));
        if (reached(policy.pauseAfterIdle(), idle) && depth < 1) return Optional.of(new Decision(Action.PAUSE, "idle"));
        return Optional.empty();
    }

    private static boolean reached(Optional<Duration> limit, Duration elapsed) {
        return limit.isPresent() && elapsed.compareTo(limit.get()) >= 0;
    }

    /** How deep a step takes a sandbox: the depth of the state it leaves it in. */
    static int depth(Action action) {
        return action.ordinal() + 1;
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
