package io.stasis.core.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.policy.IdlePolicy;
import io.stasis.core.policy.LifecyclePolicy;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.testkit.core.CoreOnFakes;
import io.stasis.testkit.fake.FakeSandboxRuntime;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The idle ladder with the default policy (pause after 15 s, standby after 2 min, hibernate after
 * an hour, delete after 30 days), on a clock the test moves: what counts as activity, and that
 * each step is taken in turn.
 */
class IdleMonitorTest {
    private static final Duration TICK = Duration.ofSeconds(1);

    @TempDir
    Path dir;
    private CoreOnFakes core;
    private IdleMonitor monitor;
    private final Set<SandboxId> keptAwake = new HashSet<>();
    private Sandbox sandbox;

    @BeforeEach
    void start() {
        core = new CoreOnFakes(dir);
        monitor = new IdleMonitor(core.catalog, core.runtime, core.lifecycle, core.sandboxes, core.activity, core.clock, TICK, 0.02,
                keptAwake::contains, Runnable::run);
        sandbox = core.create();
        monitor.checkAll(); // the first reading of its CPU counter: idle from the next on
    }

    @AfterEach
    void stop() {
        monitor.close();
        core.close();
    }

    private SandboxState after(Duration idle) {
        core.clock.advance(idle);
        monitor.checkAll();
        return stateOf(sandbox);
    }

    @Test
    void anIdleSandboxGoesDownTheLadderOneStepAtATime() {
        assertThat(after(Duration.ofSeconds(10))).isEqualTo(new SandboxState.Running());
        assertThat(after(Duration.ofSeconds(6))).isEqualTo(new SandboxState.Paused());
        assertThat(after(Duration.ofMinutes(2))).isEqualTo(new SandboxState.Standby());
        assertThat(after(Duration.ofHours(1))).isInstanceOf(SandboxState.Hibernated.class);
        assertThat(after(Duration.ofDays(30))).isEqualTo(new SandboxState.Deleted());
        assertThat(core.runtime.listOwned()).isEmpty();
    }

    @Test
    void anAgeLimitThatHibernatesWhatCannotBeCheckpointedPutsItInStandby() {
        core.lifecycle.updatePolicy(sandbox.id(), LifecyclePolicy.DEFAULT.withMaxAge(Optional.of(Duration.ofSeconds(5)),
                IdlePolicy.Action.HIBERNATE, Optional.of(Duration.ofMinutes(1))));
        core.runtime.refuseCheckpoints();
        assertThat(after(Duration.ofSeconds(5))).isEqualTo(new SandboxState.Standby());
        int dumps = core.runtime.calls(FakeSandboxRuntime.Step.CHECKPOINT);
        assertThat(after(TICK)).as("and stays there").isEqualTo(new SandboxState.Standby());
        assertThat(core.runtime.calls(FakeSandboxRuntime.Step.CHECKPOINT)).as("not dumped again every tick").isEqualTo(dumps);
    }

    @Test
    void aSandboxIsNotIdleBeforeItsSecondCpuReading() {
        var spinning = core.create();
        core.runtime.burnCpu(spinning.id(), Duration.ofMinutes(1));
        core.clock.advance(Duration.ofMinutes(1)); // a tick held up: its first reading comes late
        monitor.checkAll();
        assertThat(core.catalog.find(spinning.id()).orElseThrow().state()).isEqualTo(new SandboxState.Running());
        assertThat(after(Duration.ZERO)).as("one read before").isEqualTo(new SandboxState.Paused());
    }

    @Test
    void aPassHeldUpDoesNotMakeAnIdleSandboxBusy() {
        // 100 ms over the 16 s since the last reading: under 1% of a core, though 10% of one tick.
        core.runtime.burnCpu(sandbox.id(), Duration.ofMillis(100));
        assertThat(after(Duration.ofSeconds(16))).isEqualTo(new SandboxState.Paused());
    }

    @Test
    void aDeepStepRunsBesideThePassesAndTheSandboxIsLeftAloneUntilItEnds() {
        var queued = monitorWithQueuedSteps();
        core.lifecycle.updatePolicy(sandbox.id(), LifecyclePolicy.DEFAULT.withMaxAge(Optional.of(Duration.ofSeconds(5)),
                IdlePolicy.Action.HIBERNATE, Optional.empty()));
        var other = core.create();
        monitor.checkAll();
        core.clock.advance(Duration.ofSeconds(16));
        monitor.checkAll();
        assertThat(stateOf(sandbox)).as("its hibernation waits for its turn").isEqualTo(new SandboxState.Running());
        assertThat(stateOf(other)).as("paused meanwhile, in the same pass").isEqualTo(new SandboxState.Paused());
        monitor.checkAll();
        assertThat(queued).as("not asked again while under way").hasSize(1);
        queued.removeFirst().run();
        assertThat(stateOf(sandbox)).isInstanceOf(SandboxState.Hibernated.class);
    }

    @Test
    void aDeepStepDecidesAgainWhenItsTurnComes() {
        var queued = monitorWithQueuedSteps();
        core.clock.advance(Duration.ofHours(2));
        monitor.checkAll();
        assertThat(queued).hasSize(1);
        core.activity.touch(sandbox.id()); // an API call before the hibernation had its turn
        queued.removeFirst().run();
        assertThat(stateOf(sandbox)).isEqualTo(new SandboxState.Running());
        monitor.checkAll();
        assertThat(queued).as("the sandbox is awake again").isEmpty();
    }

    /** A monitor whose deep steps wait in a list until the test runs them; its first CPU reading taken. */
    private List<Runnable> monitorWithQueuedSteps() {
        var queued = new ArrayList<Runnable>();
        monitor.close();
        monitor = new IdleMonitor(core.catalog, core.runtime, core.lifecycle, core.sandboxes, core.activity, core.clock, TICK, 0.02,
                keptAwake::contains, queued::add);
        monitor.checkAll();
        return queued;
    }

    private SandboxState stateOf(Sandbox which) {
        return core.catalog.find(which.id()).map(Sandbox::state).orElse(new SandboxState.Deleted());
    }

    @Test
    void aSandboxIdleLongAgoTakesTheDeepestStepDue() {
        assertThat(after(Duration.ofHours(2))).isInstanceOf(SandboxState.Hibernated.class);
    }

    @Test
    void cpuUseAnAttachedClientOrAKeptAwakeProcessIsActivity() {
        for (int i = 0; i < 20; i++) {
            core.runtime.burnCpu(sandbox.id(), TICK.dividedBy(10));
            assertThat(after(TICK)).as("busy at 10% of a core").isEqualTo(new SandboxState.Running());
        }
        try (var attached = core.activity.attach(sandbox.id())) {
            assertThat(after(Duration.ofSeconds(20))).as("a terminal is attached").isEqualTo(new SandboxState.Running());
        }
        keptAwake.add(sandbox.id());
        assertThat(after(Duration.ofSeconds(20))).as("a keepAlive process runs").isEqualTo(new SandboxState.Running());
        keptAwake.clear();
        assertThat(after(Duration.ofSeconds(20))).isEqualTo(new SandboxState.Paused());
    }
}
