package io.stasis.core.checkpoint;

import static io.stasis.testkit.core.CoreOnFakes.codeOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.spi.SandboxRuntime.RuntimeStatus;
import io.stasis.core.tenant.TenantId;
import io.stasis.testkit.core.CoreOnFakes;
import io.stasis.testkit.fake.FakeSandboxRuntime.Step;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Checkpoints, forks and restores from them, here and on another host through the durable store. */
class CheckpointServiceTest {
    @TempDir
    Path dir;
    private CoreOnFakes core;
    private Sandbox parent;

    @BeforeEach
    void start() throws IOException {
        core = new CoreOnFakes(dir.resolve("here"));
        parent = core.create(Optional.of("parent"));
        core.runtime.remember(parent.id(), "answer", "42");
        Files.writeString(rootOf(core, parent.id()).resolve("notes"), "from the parent");
    }

    @AfterEach
    void stop() {
        core.close();
    }

    private static Path rootOf(CoreOnFakes core, SandboxId id) {
        return core.roots.root(id).orElseThrow();
    }

    @Test
    void forksOfAMemoryCheckpointHoldTheParentsMemoryAndFilesEachOnItsOwn() throws IOException {
        var checkpoint = core.checkpoints.create(parent.id(), Optional.of("before"), true);
        assertThat(core.runtime.status(parent.id())).as("a memory checkpoint leaves the parent running").isEqualTo(RuntimeStatus.RUNNING);

        var forks = core.checkpoints.fork(parent.id(), Optional.of(checkpoint.id()), 3, Optional.of("try"));

        assertThat(forks).extracting(f -> f.name().orElseThrow()).containsExactly("try-1", "try-2", "try-3");
        for (var fork : forks) {
            assertThat(fork.parentId()).contains(parent.id());
            assertThat(core.runtime.memory(fork.id())).containsEntry("answer", "42");
            assertThat(rootOf(core, fork.id()).resolve("notes")).hasContent("from the parent");
            assertThat(core.hostNetwork.listOpen()).contains(fork.id());
        }
        Files.writeString(rootOf(core, forks.getFirst().id()).resolve("notes"), "changed in a fork");
        assertThat(rootOf(core, parent.id()).resolve("notes")).hasContent("from the parent");
        assertThat(core.checkpoints.forks(parent.id())).hasSize(3);
    }

    @Test
    void severalMemoryForksStayFrozenUntilTheLastIsRestoredThenAllRun() {
        var checkpoint = core.checkpoints.create(parent.id(), Optional.empty(), true);
        var runningAtRestores = new ArrayList<Set<SandboxId>>();
        core.runtime.onStep(Step.RESTORE, id -> runningAtRestores.add(core.runtime.running()));

        var forks = core.checkpoints.fork(parent.id(), Optional.of(checkpoint.id()), 6, Optional.empty());

        assertThat(runningAtRestores).hasSize(6).allSatisfy(running -> assertThat(running).containsExactly(parent.id()));
        assertThat(forks).allSatisfy(f -> assertThat(core.runtime.status(f.id())).isEqualTo(RuntimeStatus.RUNNING));
    }

    @Test
    void aForkOfFilesOnlyBootsOnTheFilesWithFreshProcesses() {
        var checkpoint = core.checkpoints.create(parent.id(), Optional.empty(), false);
        assertThat(core.runtime.imageSize(checkpoint.id())).isEmpty();

        var fork = core.checkpoints.fork(parent.id(), Optional.of(checkpoint.id()), 1, Optional.empty()).getFirst();

        assertThat(core.runtime.memory(fork.id())).isEmpty();
        assertThat(rootOf(core, fork.id()).resolve("notes")).hasContent("from the parent");
    }

    @Test
    void aForkIsAllOrNothing() {
        var checkpoint = core.checkpoints.create(parent.id(), Optional.empty(), true);
        var sandboxesBefore = core.catalog.all().size();
        core.runtime.failNext(Step.RESTORE);

        assertThatThrownBy(() -> core.checkpoints.fork(parent.id(), Optional.of(checkpoint.id()), 4, Optional.empty()))
                .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.RUNTIME_FAILED));

        assertThat(core.catalog.all()).hasSize(sandboxesBefore);
        assertThat(core.runtime.listOwned()).containsExactly(parent.id());
        assertThat(core.roots.listRoots()).containsExactly(parent.id());
        assertThat(core.hostNetwork.listOpen()).containsExactly(parent.id());
    }

    @Test
    void aForkCountOutsideItsBoundsIsRefused() {
        for (int count : new int[]{0, CheckpointService.MAX_FORKS + 1})
            assertThatThrownBy(() -> core.checkpoints.fork(parent.id(), Optional.empty(), count, Optional.empty()))
                    .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.INVALID_REQUEST));
        assertThat(core.runtime.calls(Step.CHECKPOINT)).isZero();
    }

    @Test
    void deletingACheckpointRemovesItsSnapshotAndImage() {
        var checkpoint = core.checkpoints.create(parent.id(), Optional.empty(), true);

        core.checkpoints.delete(checkpoint.id());

        assertThat(core.catalog.findCheckpoint(checkpoint.id())).isEmpty();
        assertThat(core.roots.hasSnapshot(checkpoint.id())).isFalse();
        assertThat(core.runtime.imageSize(checkpoint.id())).isEmpty();
        assertThatThrownBy(() -> core.checkpoints.get(checkpoint.id()))
                .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.CHECKPOINT_NOT_FOUND));
    }

    @Test
    void aDurableCheckpointComesBackOnAnotherHost() throws IOException {
        var checkpoint = core.checkpoints.create(parent.id(), Optional.of("portable"), true, true);
        assertThat(core.host.archive().descriptor(checkpoint.id())).isPresent();

        try (var elsewhere = new CoreOnFakes(CoreOnFakes.Host.sharing(dir.resolve("there"), core.host.archive(),
                core.host.volumeArchive()), 0)) {
            assertThat(elsewhere.checkpoints.listStored(TenantId.DEFAULT)).extracting(CheckpointDescriptor::checkpoint)
                    .contains(checkpoint.id());

            var copy = elsewhere.checkpoints.createFrom(TenantId.DEFAULT, checkpoint.id(), Optional.of("copy"));

            assertThat(copy.state()).isEqualTo(new SandboxState.Running());
            assertThat(elsewhere.runtime.memory(copy.id())).containsEntry("answer", "42");
            assertThat(rootOf(elsewhere, copy.id()).resolve("notes")).hasContent("from the parent");
            Set<SandboxId> here = core.catalog.all().stream().map(Sandbox::id).collect(Collectors.toSet());
            assertThat(here).doesNotContain(copy.id());
        }
    }

    @Test
    void anotherTenantsCheckpointDoesNotExistForThisOne() {
        var checkpoint = core.checkpoints.create(parent.id(), Optional.empty(), false);
        var other = TenantId.random();

        assertThatThrownBy(() -> core.checkpoints.createFrom(other, checkpoint.id(), Optional.empty()))
                .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.CHECKPOINT_NOT_FOUND));
    }

    @Test
    void sparesWhoseRestoresFailAmongOthersAreRestoredAgainUntilAllAreReady() throws InterruptedException {
        core.runtime.failNext(Step.RESTORE);
        core.runtime.failNext(Step.RESTORE);
        var checkpoint = core.checkpoints.create(parent.id(), Optional.empty(), true, false, 5);
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (core.checkpoints.spares(checkpoint.id()).ready() < 5 && System.nanoTime() < deadline) Thread.sleep(10);
        assertThat(core.checkpoints.spares(checkpoint.id()).ready()).isEqualTo(5);
        assertThat(core.runtime.calls(Step.RESTORE)).isEqualTo(7);
    }

    @Test
    void sparesAreRestoredInTheBackgroundAndAForkFromOneRunsInTheForeground() throws InterruptedException {
        var checkpoint = core.checkpoints.create(parent.id(), Optional.empty(), true, false, 2);
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (core.checkpoints.spares(checkpoint.id()).ready() < 2 && System.nanoTime() < deadline) Thread.sleep(10);
        var spares = core.runtime.running().stream().filter(id -> !id.equals(parent.id())).toList();
        var frozen = core.runtime.listOwned().stream().filter(id -> !id.equals(parent.id())).toList();
        assertThat(frozen).hasSize(2).allMatch(core.runtime::inBackground);
        assertThat(spares).as("spares wait frozen").isEmpty();

        var child = core.checkpoints.fork(parent.id(), Optional.of(checkpoint.id()), 1, Optional.empty()).getFirst();
        assertThat(frozen).contains(child.id());
        assertThat(core.runtime.inBackground(child.id())).isFalse();
    }
}
