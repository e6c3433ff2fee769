package io.stasis.core.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.journal.Operation;
import io.stasis.core.lifecycle.LifecycleService.Reason;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.spi.RuntimeSpec;
import io.stasis.core.spi.SandboxRuntime.RuntimeStatus;
import io.stasis.testkit.core.CoreOnFakes;
import io.stasis.testkit.fake.FakeSandboxRuntime.Step;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a starting service makes of the host it finds: the catalog is the truth for what should
 * exist, the runtime for what runs; what no record names goes. ({@link CrashAtEveryStepTest}
 * covers the operations a crash cut short.)
 */
class ReconcilerTest {
    @TempDir
    Path dir;
    private CoreOnFakes core;
    private Sandbox sandbox;

    @BeforeEach
    void start() {
        core = new CoreOnFakes(dir);
        sandbox = core.create();
    }

    @AfterEach
    void stop() {
        core.close();
    }

    private SandboxState stateNow() {
        return core.catalog.find(sandbox.id()).orElseThrow().state();
    }

    @Test
    void aSandboxAndARootThatNoRecordNamesAreRemoved() {
        var stray = SandboxId.random();
        var root = core.roots.createRoot(stray, CoreOnFakes.TEMPLATE, Resources.DEFAULT.diskBytes());
        core.runtime.create(new RuntimeSpec(stray, root, stray.hostname(), Resources.DEFAULT));
        var strayRoot = SandboxId.random();
        core.roots.createRoot(strayRoot, CoreOnFakes.TEMPLATE, Resources.DEFAULT.diskBytes());

        var report = core.reconcile();

        assertThat(report.orphansRemoved()).isGreaterThanOrEqualTo(3);
        assertThat(core.runtime.listOwned()).containsExactly(sandbox.id());
        assertThat(core.roots.listRoots()).containsExactly(sandbox.id());
        assertThat(stateNow()).isEqualTo(new SandboxState.Running());
    }

    @Test
    void aSandboxWhoseProcessesDiedIsStoppedAndSaysSo() {
        core.runtime.killInit(sandbox.id());

        core.reconcile();

        assertThat(stateNow()).isEqualTo(new SandboxState.Stopped("processes_lost"));
        assertThat(core.runtime.status(sandbox.id())).isEqualTo(RuntimeStatus.UNKNOWN);
        core.lifecycle.start(sandbox.id(), Reason.API);
        assertThat(core.runtime.status(sandbox.id())).isEqualTo(RuntimeStatus.RUNNING);
    }

    @Test
    void aSandboxWhoseRootIsGoneIsStoppedAndSaysSo() {
        core.runtime.destroy(sandbox.id());
        core.roots.deleteRoot(sandbox.id());

        core.reconcile();

        assertThat(stateNow()).isEqualTo(new SandboxState.Stopped("root_missing"));
    }

    @Test
    void frozenOnPurposeStaysFrozenAndFrozenByAccidentRunsAgain() {
        var paused = core.create();
        core.lifecycle.pause(paused.id(), Reason.API);
        var standby = core.create();
        core.lifecycle.standby(standby.id(), Reason.IDLE);
        core.runtime.thaw(standby.id()); // a page-out the crash cut short: the memory came back
        core.runtime.freeze(standby.id());
        core.runtime.freeze(sandbox.id()); // running in the catalog, frozen on the host: a checkpoint cut short

        core.reconcile();

        assertThat(core.catalog.find(paused.id()).orElseThrow().state()).isEqualTo(new SandboxState.Paused());
        assertThat(core.runtime.status(paused.id())).isEqualTo(RuntimeStatus.FROZEN);
        assertThat(core.catalog.find(standby.id()).orElseThrow().state()).isEqualTo(new SandboxState.Standby());
        assertThat(core.runtime.inStandby(standby.id())).as("its memory goes out again").isTrue();
        assertThat(stateNow()).isEqualTo(new SandboxState.Running());
        assertThat(core.runtime.status(sandbox.id())).isEqualTo(RuntimeStatus.RUNNING);
        assertThat(core.runtime.calls(Step.ADOPT)).as("the runtime finishes what was half done to the one that runs on, only").isEqualTo(1);
    }

    @Test
    void aRestingSandboxThawedForASaveCutShortRestsAgainAndOneThawedToResumeRuns() {
        var paused = core.create();
        core.lifecycle.pause(paused.id(), Reason.API);
        var standby = core.create();
        core.lifecycle.standby(standby.id(), Reason.IDLE);
        core.lifecycle.pause(sandbox.id(), Reason.API);
        // As gVisor's runtime leaves them: thawed for a save (stasis-init must let go of its socket).
        for (var id : List.of(paused.id(), standby.id(), sandbox.id())) core.runtime.thaw(id);
        core.catalog.beginOperation(new Operation(paused.id(), Operation.Kind.HIBERNATE, Optional.of(CheckpointId.random()), Instant.now()));
        core.catalog.beginOperation(new Operation(standby.id(), Operation.Kind.CHECKPOINT, Optional.of(CheckpointId.random()), Instant.now()));
        core.catalog.beginOperation(new Operation(sandbox.id(), Operation.Kind.RESUME, Optional.empty(), Instant.now()));

        core.reconcile();

        assertThat(core.catalog.find(paused.id()).orElseThrow().state()).isEqualTo(new SandboxState.Paused());
        assertThat(core.runtime.status(paused.id())).isEqualTo(RuntimeStatus.FROZEN);
        assertThat(core.catalog.find(standby.id()).orElseThrow().state()).isEqualTo(new SandboxState.Standby());
        assertThat(core.runtime.inStandby(standby.id())).isTrue();
        assertThat(stateNow()).as("a resume cut short is finished").isEqualTo(new SandboxState.Running());
        assertThat(core.runtime.status(sandbox.id())).isEqualTo(RuntimeStatus.RUNNING);
        assertThat(core.catalog.pendingOperations()).isEmpty();
    }

    @Test
    void imagesAndSnapshotsOfNoRecordedCheckpointAreRemoved() {
        var strayImage = CheckpointId.random();
        core.runtime.checkpoint(sandbox.id(), strayImage, true);
        var straySnapshot = CheckpointId.random();
        core.roots.snapshotRoot(sandbox.id(), straySnapshot);
        var kept = core.checkpoints.create(sandbox.id(), Optional.of("kept"), true);

        core.reconcile();

        assertThat(core.runtime.listImages()).containsExactly(kept.id());
        assertThat(core.roots.listSnapshots()).containsExactly(kept.id());
    }

    @Test
    void aHibernationCutShortAfterItsDumpIsHibernatedWithItsRootsSnapshot() {
        var checkpoint = CheckpointId.random();
        core.catalog.beginOperation(new Operation(sandbox.id(), Operation.Kind.HIBERNATE, Optional.of(checkpoint), Instant.now()));
        core.runtime.checkpoint(sandbox.id(), checkpoint, false); // the dump ended the processes; the root's snapshot comes after it

        core.reconcile();

        assertThat(stateNow()).isInstanceOf(SandboxState.Hibernated.class);
        assertThat(core.roots.hasSnapshot(checkpoint)).isTrue();
        core.lifecycle.resume(sandbox.id(), Reason.API);
        assertThat(core.runtime.status(sandbox.id())).isEqualTo(RuntimeStatus.RUNNING);
    }

    @Test
    void aHibernatedSandboxWithItsImageStaysHibernated() {
        var hibernated = core.lifecycle.hibernate(sandbox.id(), Reason.API);

        core.reconcile();

        assertThat(stateNow()).isEqualTo(hibernated.state());
        core.lifecycle.resume(sandbox.id(), Reason.API);
        assertThat(core.runtime.status(sandbox.id())).isEqualTo(RuntimeStatus.RUNNING);
    }
}
