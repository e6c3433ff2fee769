package io.stasis.core.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.policy.IdlePolicy.Action;
import io.stasis.core.sandbox.SandboxState;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.LongRange;

/**
 * {@link IdlePolicy#decide}, the idle ladder as a pure function: the deepest step whose time has
 * come wins, a step never moves a sandbox up, a longer idle never decides a shallower step, and
 * {@code maxAge} deletes whatever the rest says.
 */
class IdlePolicyPropertyTest {
    private static final Instant CREATED = Instant.parse("2026-12-01T00:00:00Z");
    private static final List<Action> LADDER = List.of(Action.PAUSE, Action.STANDBY, Action.HIBERNATE, Action.STOP, Action.DELETE);

    @Property
    void theDeepestDueStepBelowTheStateWins(@ForAll("policies") LifecyclePolicy policy, @ForAll("states") SandboxState state,
                                              @ForAll @LongRange(min = 0, max = 200_000) long idleSeconds) {
        var now = CREATED.plusSeconds(idleSeconds);
        var decision = IdlePolicy.decide(policy, state, CREATED, CREATED, now);
        Optional<Action> expected = Optional.empty();
        if (!(state instanceof SandboxState.Deleted)) {
            var idle = Duration.ofSeconds(idleSeconds);
            if (due(policy.maxAge(), idle) || due(policy.deleteAfterIdle(), idle)) expected = Optional.of(Action.DELETE);
            else {
                var limits = List.of(policy.pauseAfterIdle(), policy.standbyAfterIdle(), policy.hibernateAfterIdle(), policy.stopAfterIdle());
                for (int step = limits.size() - 1; step >= 0 && expected.isEmpty(); step--)
                    if (step >= depth(state) && due(limits.get(step), idle)) expected = Optional.of(LADDER.get(step));
            }
        }
        assertThat(decision.map(IdlePolicy.Decision::action)).isEqualTo(expected);
    }

    @Property
    void aStepNeverMovesASandboxUpTheLadder(@ForAll("policies") LifecyclePolicy policy, @ForAll("states") SandboxState state,
                                             @ForAll @LongRange(min = 0, max = 200_000) long idleSeconds) {
        IdlePolicy.decide(policy, state, CREATED, CREATED, CREATED.plusSeconds(idleSeconds))
                .ifPresent(d -> assertThat(LADDER.indexOf(d.action())).as(d + " from " + state).isGreaterThanOrEqualTo(depth(state)));
    }

    @Property
    void idlingLongerNeverDecidesAShallowerStep(@ForAll("policies") LifecyclePolicy policy, @ForAll("states") SandboxState state,
                                                @ForAll @LongRange(min = 0, max = 100_000) long earlier,
                                                @ForAll @LongRange(min = 0, max = 100_000) long more) {
        var first = IdlePolicy.decide(policy, state, CREATED, CREATED, CREATED.plusSeconds(earlier));
        var later = IdlePolicy.decide(policy, state, CREATED, CREATED, CREATED.plusSeconds(earlier + more));
        if (first.isPresent()) {
            assertThat(later).as("still due later").isPresent();
            assertThat(LADDER.indexOf(later.get().action())).isGreaterThanOrEqualTo(LADDER.indexOf(first.get().action()));
        }
    }

    @Property
    void maxAgeDeletesWhateverTheIdleTimeAndCallsItTtl(@ForAll("policies") LifecyclePolicy policy, @ForAll("states") SandboxState state,
                                                       @ForAll @LongRange(min = 1, max = 100_000) long ageSeconds) {
        var aged = new LifecyclePolicy(policy.pauseAfterIdle(), policy.standbyAfterIdle(), policy.hibernateAfterIdle(), policy.stopAfterIdle(),
                policy.deleteAfterIdle(), Optional.of(Duration.ofSeconds(ageSeconds)), policy.autoResume(), Optional.empty());
        var now = CREATED.plusSeconds(ageSeconds);
        // Active a second ago: only the age counts.
        var decision = IdlePolicy.decide(aged, state, CREATED, now.minusSeconds(1), now);
        if (state instanceof SandboxState.Deleted) assertThat(decision).isEmpty();
        else assertThat(decision).contains(new IdlePolicy.Decision(Action.DELETE, "ttl"));
    }

    @Property
    void anAgeLimitThatSleepsActsOnceThenLeavesTheIdleLadderToItsWork(@ForAll("policies") LifecyclePolicy policy,
                                                                       @ForAll("states") SandboxState state,
                                                                       @ForAll("sleeps") Action sleep,
                                                                       @ForAll @LongRange(min = 1, max = 100_000) long ageSeconds,
                                                                       @ForAll @LongRange(min = 0, max = 100_000) long idleSeconds) {
        var aged = policy.withMaxAge(Optional.of(Duration.ofSeconds(ageSeconds)), sleep, Optional.empty());
        var now = CREATED.plusSeconds(ageSeconds + idleSeconds);
        var idleSince = now.minusSeconds(idleSeconds);
        var decision = IdlePolicy.decide(aged, state, CREATED, idleSince, now);
        if (!(state instanceof SandboxState.Deleted) && depth(state) < LADDER.indexOf(sleep) + 1)
            assertThat(decision).contains(new IdlePolicy.Decision(sleep, "ttl"));
        else // asleep at least that deep already: what the idle ladder says, as if there were no age limit
            assertThat(decision).isEqualTo(IdlePolicy.decide(policy, state, CREATED, idleSince, now));
    }

    @Property
    void aSandboxItsAgePutToSleepWakesWithWakeForMoreAndIsNotPutBackAtOnce(@ForAll("policies") LifecyclePolicy policy,
                                                                          @ForAll("sleeps") Action sleep,
                                                                          @ForAll @LongRange(min = 1, max = 100_000) long ageSeconds,
                                                                          @ForAll @LongRange(min = 0, max = 100_000) long laterSeconds,
                                                                          @ForAll @LongRange(min = 1, max = 100_000) long wakeSeconds) {
        var aged = policy.withMaxAge(Optional.of(Duration.ofSeconds(ageSeconds)), sleep, Optional.of(Duration.ofSeconds(wakeSeconds)));
        var wokenAge = Duration.ofSeconds(ageSeconds + laterSeconds);
        var woken = aged.wokenAt(wokenAge);
        assertThat(woken.maxAge()).contains(wokenAge.plusSeconds(wakeSeconds));
        var now = CREATED.plus(wokenAge);
        assertThat(IdlePolicy.decide(woken, new SandboxState.Running(), CREATED, now, now)).isEmpty();
        // ... until wakeFor has passed
        assertThat(IdlePolicy.decide(woken, new SandboxState.Running(), CREATED, now, now.plusSeconds(wakeSeconds)))
                .map(IdlePolicy.Decision::reason).contains("ttl");
        // No wakeFor: the limit goes. An age limit that deletes, or one not reached, stays as it was.
        assertThat(aged.withMaxAge(aged.maxAge(), sleep, Optional.empty()).wokenAt(wokenAge).maxAge()).isEmpty();
        assertThat(aged.wokenAt(Duration.ofSeconds(ageSeconds - 1))).isEqualTo(aged);
        var deletes = aged.withMaxAge(aged.maxAge(), Action.DELETE, aged.wakeFor());
        assertThat(deletes.wokenAt(wokenAge)).isEqualTo(deletes);
    }

    private static boolean due(Optional<Duration> limit, Duration idle) {
        return limit.isPresent() && idle.compareTo(limit.get()) >= 0;
    }

    /** The first ladder step a state may still take: running 0 (pause), paused 1, standby 2, hibernated 3, stopped 4 (delete only). */
    private static int depth(SandboxState state) {
        return IdlePolicy.depth(state);
    }

    @Provide
    Arbitrary<SandboxState> states() {
        return Arbitraries.of(new SandboxState.Running(), new SandboxState.Paused(), new SandboxState.Standby(),
                new SandboxState.Hibernated(new CheckpointId("ckpt_0000000000000000"), 1, CREATED), new SandboxState.Stopped("api"),
                new SandboxState.Deleted());
    }

    @Provide
    Arbitrary<Action> sleeps() {
        return Arbitraries.of(Action.PAUSE, Action.STANDBY, Action.HIBERNATE, Action.STOP);
    }

    @Provide
    Arbitrary<LifecyclePolicy> policies() {
        Arbitrary<Optional<Duration>> limit = Arbitraries.longs().between(1, 150_000).map(Duration::ofSeconds).optional(0.6);
        return Combinators.combine(limit, limit, limit, limit, limit, Arbitraries.of(true, false))
                .as((pause, standby, hibernate, stop, delete, wake) -> new LifecyclePolicy(pause, standby, hibernate, stop, delete,
                        Optional.empty(), wake, Optional.empty()));
    }
}
