package io.stasis.core.lifecycle;

import static io.stasis.testkit.core.CoreOnFakes.codeOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.checkpoint.Checkpoint;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.lifecycle.LifecycleService.Reason;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.spi.SandboxRuntime.RuntimeStatus;
import io.stasis.testkit.core.CoreOnFakes;
import io.stasis.testkit.fake.FakeSandboxRuntime.Step;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Pause, standby, hibernate, stop and their way back, and what a failed step leaves. */
class LifecycleServiceTest {
    @TempDir
    Path dir;
    private CoreOnFakes core;
    private Sandbox sandbox;

    @BeforeEach
    void start() {
        core = new CoreOnFakes(dir);
        sandbox = core.create();
        core.runtime.remember(sandbox.id(), "answer", "42");
    }

    @AfterEach
    void stop() {
        core.close();
    }

    private SandboxState stateNow() {
        return core.catalog.find(sandbox.id()).orElseThrow().state();
    }

    private void assertRunningWithItsMemory() {
        assertThat(stateNow()).isEqualTo(new SandboxState.Running());
        assertThat(core.runtime.status(sandbox.id())).isEqualTo(RuntimeStatus.RUNNING);
        assertThat(core.runtime.memory(sandbox.id())).containsEntry("answer", "42");
        assertThat(core.catalog.pendingOperations()).isEmpty();
    }

    @Test
    void aPausedSandboxIsFrozenUntilResumed() {
        var paused = core.lifecycle.pause(sandbox.id(), Reason.API);
        assertThat(paused.state()).isEqualTo(new SandboxState.Paused());
        assertThat(core.runtime.status(sandbox.id())).isEqualTo(RuntimeStatus.FROZEN);

        core.lifecycle.resume(sandbox.id(), Reason.API);
        assertRunningWithItsMemory();
    }

    @Test
    void standbyGivesTheMemoryBackAndEachChangeIsANewGeneration() {
        long before = sandbox.generation();
        var standby = core.lifecycle.standby(sandbox.id(), Reason.IDLE);
        assertThat(standby.state()).isEqualTo(new SandboxState.Standby());
        assertThat(standby.generation()).isGreaterThan(before);
        assertThat(core.runtime.inStandby(sandbox.id())).isTrue();
        assertThat(core.runtime.residentBytes(sandbox.id())).isZero();

        assertThatThrownBy(() -> core.lifecycle.resume(sandbox.id(), Reason.API, standby.generation() + 1))
                .as("a caller that saw a newer state than this one is told, instead of getting an older one")
                .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.GENERATION_MISMATCH));
        assertThat(stateNow()).isEqualTo(new SandboxState.Standby());

        var resumed = core.lifecycle.resume(sandbox.id(), Reason.API, standby.generation());
        assertThat(resumed.generation()).isGreaterThan(standby.generation());
        assertRunningWithItsMemory();
    }

    @Test
    void aHibernatedSandboxHoldsNoProcessesAndComesBackWithItsMemory() {
        var hibernated = core.lifecycle.hibernate(sandbox.id(), Reason.API);

        var state = (SandboxState.Hibernated) hibernated.state();
        assertThat(core.runtime.status(sandbox.id())).isEqualTo(RuntimeStatus.UNKNOWN);
        assertThat(core.runtime.imageSize(state.checkpoint())).hasValue(state.imageBytes());
        assertThat(core.roots.hasSnapshot(state.checkpoint())).isTrue();
        assertThat(core.catalog.findCheckpoint(state.checkpoint())).hasValueSatisfying(
                c -> assertThat(c.purpose()).isEqualTo(Checkpoint.Purpose.HIBERNATION));

        core.lifecycle.resume(sandbox.id(), Reason.API);
        assertRunningWithItsMemory();
        assertThat(core.catalog.findCheckpoint(state.checkpoint())).as("the hibernation image is spent").isEmpty();
        assertThat(core.runtime.listImages()).isEmpty();
    }

    @Test
    void aFailedDumpLeavesTheSandboxRunningAndNothingOfTheImage() {
        core.runtime.failNext(Step.CHECKPOINT);

        assertThatThrownBy(() -> core.lifecycle.hibernate(sandbox.id(), Reason.API))
                .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.RUNTIME_FAILED));

        assertRunningWithItsMemory();
        assertThat(core.catalog.checkpointsOf(sandbox.id())).isEmpty();
        assertThat(core.roots.listSnapshots()).isEmpty();
        assertThat(core.runtime.listImages()).isEmpty();
    }

    @Test
    void aFailedRestoreLeavesTheSandboxHibernatedAndItsImageWhole() {
        var hibernated = core.lifecycle.hibernate(sandbox.id(), Reason.API);
        core.runtime.failNext(Step.RESTORE);

        assertThatThrownBy(() -> core.lifecycle.resume(sandbox.id(), Reason.API)).isInstanceOf(StasisException.class);

        assertThat(stateNow()).isEqualTo(hibernated.state());
        assertThat(core.runtime.status(sandbox.id())).isEqualTo(RuntimeStatus.UNKNOWN);
        assertThat(core.catalog.pendingOperations()).isEmpty();
        core.lifecycle.resume(sandbox.id(), Reason.API);
        assertRunningWithItsMemory();
    }

    @Test
    void aStoppedSandboxStartsAgainOnItsFilesWithFreshProcesses() throws Exception {
        Files.writeString(core.roots.root(sandbox.id()).orElseThrow().resolve("kept"), "on disk");
        var stopped = core.lifecycle.stop(sandbox.id(), Reason.API);
        assertThat(stopped.state()).isInstanceOf(SandboxState.Stopped.class);
        assertThat(core.runtime.status(sandbox.id())).isEqualTo(RuntimeStatus.UNKNOWN);

        core.lifecycle.start(sandbox.id(), Reason.API);

        assertThat(stateNow()).isEqualTo(new SandboxState.Running());
        assertThat(core.runtime.memory(sandbox.id())).as("a start is not a restore").isEmpty();
        assertThat(core.roots.root(sandbox.id()).orElseThrow().resolve("kept")).hasContent("on disk");
    }

    @Test
    void aStoppedSandboxCannotBePausedAndSaysWhy() {
        core.lifecycle.stop(sandbox.id(), Reason.API);
        assertThatThrownBy(() -> core.lifecycle.pause(sandbox.id(), Reason.API))
                .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.INVALID_STATE))
                .hasMessageContaining("stopped");
    }
}
