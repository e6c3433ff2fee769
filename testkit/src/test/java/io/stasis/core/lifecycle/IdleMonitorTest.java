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
import java.util.HashSet;
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
                keptAwake::contains);
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
        return core.catalog.find(sandbox.id()).map(Sandbox::state).orElse(new SandboxState.Deleted());
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
