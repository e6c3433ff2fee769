package io.stasis.core.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.sandbox.Sandbox;
import io.stasis.testkit.core.CoreOnFakes;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The durability policy: a running sandbox keeps one durable memory checkpoint, at most a period old; others keep none. */
class DurabilityKeeperTest {
    @TempDir
    Path dir;
    private CoreOnFakes core;
    private DurabilityKeeper keeper;

    @BeforeEach
    void start() throws IOException {
        core = new CoreOnFakes(dir.resolve("here"));
        keeper = new DurabilityKeeper(core.catalog, core.checkpoints, core.clock, Duration.ofSeconds(1));
    }

    @AfterEach
    void stop() {
        keeper.close();
        core.close();
    }

    private Sandbox kept(String name) {
        var sandbox = core.create(Optional.of(name));
        var policy = sandbox.lifecycle().withCheckpointEvery(Optional.of(Duration.ofMinutes(5)));
        return core.lifecycle.updatePolicy(sandbox.id(), policy);
    }

    private List<Checkpoint> durabilityOf(Sandbox sandbox) {
        return core.catalog.checkpointsOf(sandbox.id()).stream().filter(c -> c.purpose() == Checkpoint.Purpose.DURABILITY).toList();
    }

    @Test
    void aRunningSandboxKeepsTheNewestDurableMemoryCheckpointAtMostAPeriodOld() {
        var sandbox = kept("kept");
        var other = core.create(Optional.of("without-policy"));

        assertThat(keeper.keepUp()).isEqualTo(1);
        var first = durabilityOf(sandbox);
        assertThat(first).hasSize(1);
        assertThat(first.getFirst().memory()).isTrue();
        assertThat(core.catalog.durableImage(sandbox.id())).map(DurableImage::checkpoint).contains(first.getFirst().id());
        assertThat(durabilityOf(other)).isEmpty();
        assertThat(keeper.kept()).containsExactly(sandbox.id());

        core.clock.advance(Duration.ofMinutes(4));
        assertThat(keeper.keepUp()).as("not due yet").isZero();
        core.clock.advance(Duration.ofMinutes(2));
        assertThat(keeper.keepUp()).isEqualTo(1);
        var second = durabilityOf(sandbox);
        assertThat(second).hasSize(1).doesNotContainAnyElementsOf(first);
        assertThat(core.catalog.durableImage(sandbox.id())).map(DurableImage::checkpoint).contains(second.getFirst().id());
    }

    @Test
    void aPausedSandboxKeepsTheOneItHasAndIsNotFrozenByANodeCutOff() {
        var sandbox = kept("paused");
        keeper.keepUp();
        core.lifecycle.pause(sandbox.id(), io.stasis.core.lifecycle.LifecycleService.Reason.API);
        core.clock.advance(Duration.ofHours(1));
        assertThat(keeper.keepUp()).isZero();
        assertThat(durabilityOf(sandbox)).hasSize(1);
        assertThat(keeper.kept()).as("frozen already").isEmpty();
    }
}
