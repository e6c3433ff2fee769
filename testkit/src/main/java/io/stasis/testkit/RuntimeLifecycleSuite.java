package io.stasis.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.exec.ExitStatus;
import io.stasis.core.exec.Signal;
import io.stasis.core.sandbox.Ids;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.RuntimeSpec;
import io.stasis.core.spi.SandboxRuntime;
import io.stasis.core.spi.SandboxRuntime.RuntimeStatus;
import io.stasis.core.spi.SpawnSpec;
import java.io.ByteArrayInputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The states of a sandbox in a {@link SandboxRuntime} and its images: what the orchestration in
 * core relies on, and what every runtime, fakes included, must do. What processes do inside is the
 * subject of {@link RuntimeSuite} and {@link LiveStateSuite}, which only a real runtime can pass.
 */
public abstract class RuntimeLifecycleSuite {
    private final Set<SandboxId> created = new LinkedHashSet<>();
    private final List<CheckpointId> images = new ArrayList<>();

    protected abstract SandboxRuntime runtime();

    /** A fresh writable root for {@code id} from a template with busybox. */
    protected abstract Path newRoot(SandboxId id);

    protected abstract void deleteRoot(SandboxId id);

    /** What must be gone from the host once the suite has destroyed these sandboxes. */
    protected void assertNothingLeft(Set<SandboxId> destroyed) {
    }

    /**
     * Whether the runtime checkpoints and restores: a runtime that cannot yet (gVisor, see its
     * class) skips those tests, and says so in its runner, rather than passing them.
     */
    protected boolean checkpoints() {
        return true;
    }

    /** Registers a sandbox the test made itself (a restored copy), so that teardown ends it. */
    protected void track(SandboxId id) {
        created.add(id);
    }

    /** Whether the sandbox runs at a background sandbox's CPU weight, as the runtime shows it (its cgroup). */
    protected abstract boolean runsInBackground(SandboxId id);

    protected SandboxId start(Resources resources) {
        var id = SandboxId.random();
        created.add(id);
        runtime().create(new RuntimeSpec(id, newRoot(id), id.hostname(), resources));
        return id;
    }

    protected SandboxId start() {
        return start(Resources.DEFAULT);
    }

    /** An image id that teardown deletes. */
    protected CheckpointId newImage() {
        var id = CheckpointId.random();
        images.add(id);
        return id;
    }

    @AfterEach
    void destroyEverything() {
        for (var id : created) {
            runtime().destroy(id);
            deleteRoot(id);
        }
        images.forEach(runtime()::deleteImage);
        images.clear();
        assertNothingLeft(Set.copyOf(created));
        created.clear();
    }

    private static SpawnSpec argv(String... argv) {
        return new SpawnSpec(List.of(argv), Optional.empty(), Commands.ENV, Optional.empty());
    }

    private void assertGone(SandboxId id) {
        assertThat(runtime().status(id)).isEqualTo(RuntimeStatus.UNKNOWN);
        assertThat(runtime().listOwned()).doesNotContain(id);
    }

    @Test
    void aCreatedSandboxRunsAndIsOwned() {
        var id = start();
        assertThat(runtime().status(id)).isEqualTo(RuntimeStatus.RUNNING);
        assertThat(runtime().listOwned()).contains(id);
        assertThat(runtime().residentBytes(id)).isPositive();
        assertThat(runtime().cpuUsage(id)).isGreaterThanOrEqualTo(Duration.ZERO);
    }

    @Test
    void aSandboxStartedInTheBackgroundRunsAtALowWeightUntilItIsBroughtToTheForeground() {
        var id = SandboxId.random();
        created.add(id);
        runtime().create(new RuntimeSpec(id, newRoot(id), id.hostname(), Resources.DEFAULT).inBackground());
        assertThat(runsInBackground(id)).isTrue();
        assertThat(runtime().status(id)).as("it waits running, or frozen where an idle sandbox uses CPU")
                .isIn(RuntimeStatus.RUNNING, RuntimeStatus.FROZEN);
        runtime().foreground(id);
        runtime().foreground(id);
        assertThat(runsInBackground(id)).isFalse();
        assertThat(runtime().status(id)).isEqualTo(RuntimeStatus.RUNNING);
        assertThat(Commands.run(runtime(), id, "true").exit()).isEqualTo(ExitStatus.exited(0));
        // One started as usual and then frozen stays as it is.
        var usual = start();
        runtime().freeze(usual);
        runtime().foreground(usual);
        assertThat(runsInBackground(usual)).isFalse();
        assertThat(runtime().status(usual)).isEqualTo(RuntimeStatus.FROZEN);
    }

    @Test
    void aSandboxTheRuntimeNeverHadIsUnknown() {
        var id = SandboxId.random();
        assertGone(id);
        runtime().destroy(id);
        assertThatThrownBy(() -> runtime().spawn(id, argv("true"))).isInstanceOf(StasisException.class);
    }

    @Test
    void freezeAndThawAreIdempotent() {
        var id = start();
        runtime().freeze(id);
        runtime().freeze(id);
        assertThat(runtime().status(id)).isEqualTo(RuntimeStatus.FROZEN);
        runtime().thaw(id);
        runtime().thaw(id);
        assertThat(runtime().status(id)).isEqualTo(RuntimeStatus.RUNNING);
    }

    @Test
    void standbyFreezesAndAThawRunsAgain() {
        var id = start();
        runtime().standby(id);
        assertThat(runtime().status(id)).isEqualTo(RuntimeStatus.FROZEN);
        assertThat(runtime().swappedBytes(id)).isGreaterThanOrEqualTo(0);
        runtime().thaw(id);
        assertThat(runtime().status(id)).isEqualTo(RuntimeStatus.RUNNING);
    }

    @Test
    void aCommandRunsToItsExit() {
        var id = start();
        assertThat(Commands.run(runtime(), id, "true").exit()).isEqualTo(ExitStatus.exited(0));
    }

    @Test
    void aBackgroundProcessIsListedUntilForgotten() throws Exception {
        var id = start();
        String processId = Ids.randomSuffix();
        long pid = runtime().startProcess(id, processId, argv("sleep", "1000"), "label".getBytes());
        assertThat(runtime().processes(id)).singleElement().satisfies(p -> {
            assertThat(p.processId()).isEqualTo(processId);
            assertThat(p.pid()).isEqualTo(pid);
            assertThat(p.label()).asString().isEqualTo("label");
            assertThat(p.running()).isTrue();
        });
        runtime().signal(id, pid, Signal.KILL.number());
        Await.until("the process to end", Duration.ofSeconds(10), () -> !runtime().processes(id).getFirst().running());
        try (var handle = runtime().attach(id, processId)) {
            assertThat(handle.awaitExit(Duration.ofSeconds(5))).contains(ExitStatus.killed(Signal.KILL.number()));
        }
        runtime().forgetProcess(id, processId);
        assertThat(runtime().processes(id)).isEmpty();
    }

    @Test
    void aCheckpointThatLeavesItRunningKeepsItsState() {
        assumeTrue(checkpoints(), "this runtime does not checkpoint yet");
        var id = start();
        var image = newImage();
        long size = runtime().checkpoint(id, image, true);
        assertThat(size).isPositive();
        assertThat(runtime().imageSize(image)).hasValue(size);
        assertThat(runtime().listImages()).contains(image);
        assertThat(runtime().status(id)).isEqualTo(RuntimeStatus.RUNNING);

        runtime().freeze(id);
        runtime().checkpoint(id, newImage(), true);
        assertThat(runtime().status(id)).as("frozen stays frozen").isEqualTo(RuntimeStatus.FROZEN);
    }

    @Test
    void whatRunsAtRestRunsOnceWithTheProcessesStoppedAndItsFailureLeavesNoImage() {
        assumeTrue(checkpoints(), "this runtime does not checkpoint yet");
        var id = start();
        var seen = new ArrayList<RuntimeStatus>();
        runtime().checkpoint(id, newImage(), () -> seen.add(runtime().status(id)));
        assertThat(seen).containsExactly(RuntimeStatus.FROZEN);
        assertThat(runtime().status(id)).isEqualTo(RuntimeStatus.RUNNING);

        var refused = newImage();
        assertThatThrownBy(() -> runtime().checkpoint(id, refused, () -> {
            throw new IllegalStateException("no snapshot");
        })).hasMessageContaining("no snapshot");
        assertThat(runtime().imageSize(refused)).isEmpty();
        assertThat(runtime().status(id)).as("as before").isEqualTo(RuntimeStatus.RUNNING);
        assertThat(Commands.run(runtime(), id, "true").code()).isZero();
    }

    @Test
    void aHibernatedSandboxIsGoneUntilRestoredFromItsImage() {
        assumeTrue(checkpoints(), "this runtime does not checkpoint yet");
        var id = start();
        var image = newImage();
        runtime().checkpoint(id, image, false);
        assertThat(runtime().status(id)).isEqualTo(RuntimeStatus.UNKNOWN);
        assertThat(runtime().imageSize(image)).isPresent();

        runtime().restore(spec(id), image);
        assertThat(runtime().status(id)).isEqualTo(RuntimeStatus.RUNNING);
        assertThat(runtime().listOwned()).contains(id);
        assertThat(runtime().imageSize(image)).as("a restore leaves the image").isPresent();
        assertThat(Commands.run(runtime(), id, "true").code()).isZero();
    }

    @Test
    void aRestoreOfAMissingImageFailsAndLeavesNothing() {
        assumeTrue(checkpoints(), "this runtime does not checkpoint yet");
        var id = SandboxId.random();
        track(id);
        var spec = new RuntimeSpec(id, newRoot(id), id.hostname(), Resources.DEFAULT);
        assertThatThrownBy(() -> runtime().restore(spec, CheckpointId.random()))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.RUNTIME_FAILED));
        assertGone(id);
    }

    @Test
    void anExportedImageImportsAndRestores() {
        assumeTrue(checkpoints(), "this runtime does not checkpoint yet");
        var id = start();
        var image = newImage();
        long size = runtime().checkpoint(id, image, false);
        byte[] exported = runtime().exportImage(image, in -> in.readAllBytes());
        assertThat(exported).isNotEmpty();
        assertThatThrownBy(() -> runtime().importImage(image, new ByteArrayInputStream(exported)))
                .as("an image that exists is not imported over")
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.RUNTIME_FAILED));

        runtime().deleteImage(image);
        assertThat(runtime().imageSize(image)).isEmpty();
        assertThat(runtime().importImage(image, new ByteArrayInputStream(exported))).isEqualTo(size);
        assertThat(runtime().imageSize(image)).hasValue(size);
        runtime().restore(spec(id), image);
        assertThat(runtime().status(id)).isEqualTo(RuntimeStatus.RUNNING);
    }

    @Test
    void deletingAnImageIsIdempotent() {
        assumeTrue(checkpoints(), "this runtime does not checkpoint yet");
        var id = start();
        var image = newImage();
        runtime().checkpoint(id, image, true);
        runtime().deleteImage(image);
        runtime().deleteImage(image);
        assertThat(runtime().imageSize(image)).isEmpty();
        assertThat(runtime().listImages()).doesNotContain(image);
    }

    @Test
    void stopAndDestroyEndTheSandbox() {
        var stopped = start();
        runtime().stop(stopped, Duration.ofSeconds(5));
        assertGone(stopped);

        var frozen = start();
        runtime().freeze(frozen);
        runtime().destroy(frozen);
        assertGone(frozen);
        runtime().destroy(frozen);
    }

    private RuntimeSpec spec(SandboxId id) {
        return new RuntimeSpec(id, rootOf(id), id.hostname(), Resources.DEFAULT);
    }

    /** The root {@link #newRoot} made for {@code id}, still in place. */
    protected abstract Path rootOf(SandboxId id);
}
