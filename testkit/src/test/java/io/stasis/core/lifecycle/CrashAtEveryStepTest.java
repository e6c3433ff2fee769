package io.stasis.core.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.checkpoint.CheckpointUpload;
import io.stasis.core.lifecycle.LifecycleService.Reason;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.spi.SandboxRuntime.RuntimeStatus;
import io.stasis.host.FileTrees;
import io.stasis.testkit.Await;
import io.stasis.testkit.core.CoreOnFakes;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The journal's promise, on the fakes: the service dies at any fault point of any multi-step
 * change, a new one starts on what it left, and each sandbox is in its old or its new state, its
 * memory whole, with nothing left over in any SPI. Every fault point an operation passes is found
 * by running it once, so a new step is covered as soon as it is added. The root-level crash tests
 * ({@code CrashRecoveryIT}, {@code RandomKillIT}) kill a real service at a few of these points;
 * this one stops at all of them in a second.
 */
class CrashAtEveryStepTest {
    @TempDir
    Path dir;

    /** One operation on a prepared sandbox, and the states it may be found in after a crash. */
    private record Scenario(String name, Consumer<Fixture> prepare, Function<Fixture, Object> run, Set<Class<?>> outcomes) {
        @Override
        public String toString() {
            return name;
        }
    }

    private record Fixture(CoreOnFakes core, SandboxId id) {
    }

    private static final List<Scenario> SCENARIOS = List.of(
            new Scenario("pause", f -> { }, f -> f.core().lifecycle.pause(f.id(), Reason.API),
                    Set.of(SandboxState.Running.class, SandboxState.Paused.class)),
            new Scenario("standby", f -> { }, f -> f.core().lifecycle.standby(f.id(), Reason.IDLE),
                    Set.of(SandboxState.Running.class, SandboxState.Standby.class)),
            new Scenario("resume from standby", f -> f.core().lifecycle.standby(f.id(), Reason.IDLE),
                    f -> f.core().lifecycle.resume(f.id(), Reason.API), Set.of(SandboxState.Standby.class, SandboxState.Running.class)),
            new Scenario("hibernate", f -> { }, f -> f.core().lifecycle.hibernate(f.id(), Reason.API),
                    Set.of(SandboxState.Running.class, SandboxState.Hibernated.class)),
            new Scenario("hibernate a paused one", f -> f.core().lifecycle.pause(f.id(), Reason.API),
                    f -> f.core().lifecycle.hibernate(f.id(), Reason.IDLE), Set.of(SandboxState.Paused.class, SandboxState.Hibernated.class)),
            new Scenario("resume from hibernation", f -> f.core().lifecycle.hibernate(f.id(), Reason.API),
                    f -> f.core().lifecycle.resume(f.id(), Reason.API), Set.of(SandboxState.Hibernated.class, SandboxState.Running.class)),
            new Scenario("memory checkpoint", f -> { }, f -> f.core().checkpoints.create(f.id(), Optional.of("cp"), true),
                    Set.of(SandboxState.Running.class)),
            new Scenario("durable checkpoint", f -> { }, f -> f.core().checkpoints.create(f.id(), Optional.of("kept"), true, true),
                    Set.of(SandboxState.Running.class)),
            new Scenario("fork of 2", f -> { }, f -> f.core().checkpoints.fork(f.id(), Optional.empty(), 2, Optional.empty()),
                    Set.of(SandboxState.Running.class)),
            new Scenario("stop", f -> { }, f -> f.core().lifecycle.stop(f.id(), Reason.API),
                    Set.of(SandboxState.Running.class, SandboxState.Stopped.class)),
            new Scenario("start", f -> f.core().lifecycle.stop(f.id(), Reason.API), f -> f.core().lifecycle.start(f.id(), Reason.API),
                    Set.of(SandboxState.Stopped.class, SandboxState.Running.class)),
            new Scenario("delete", f -> { }, f -> {
                f.core().sandboxes.delete(f.id().value());
                return null;
            }, Set.of(SandboxState.Running.class)));

    private static Fixture prepare(Path dir, Scenario scenario) {
        var core = new CoreOnFakes(dir);
        var sandbox = core.create(Optional.of("subject"));
        core.runtime.remember(sandbox.id(), "answer", "42");
        var fixture = new Fixture(core, sandbox.id());
        scenario.prepare().accept(fixture);
        return fixture;
    }

    /** Every (scenario, fault point) pair: each scenario run once, without a crash, to find the points it passes. */
    static Stream<Arguments> crashes() throws IOException {
        var out = new ArrayList<Arguments>();
        for (var scenario : SCENARIOS) {
            Path scratch = Files.createTempDirectory("stasis-crash-discovery");
            try {
                var fixture = prepare(scratch, scenario);
                int before = fixture.core().faults.reached().size();
                scenario.run().apply(fixture);
                var points = fixture.core().faults.reached().subList(before, fixture.core().faults.reached().size());
                assertThat(points).as("fault points of " + scenario).isNotEmpty();
                for (String point : points.stream().distinct().toList()) out.add(Arguments.of(scenario, point));
                fixture.core().close();
            } finally {
                FileTrees.deleteRecursively(scratch);
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0}, killed at {1}")
    @MethodSource("crashes")
    void aKilledServiceLeavesTheOldOrTheNewState(Scenario scenario, String point) {
        try {
            killAndRestart(scenario, point);
        } catch (AssertionError e) {
            throw new AssertionError(scenario + ", killed at " + point + ": " + e.getMessage(), e);
        }
    }

    private void killAndRestart(Scenario scenario, String point) {
        var fixture = prepare(dir, scenario);
        fixture.core().faults.arm(point);

        // Forks run on threads of their own: the crash may come back wrapped.
        assertThatThrownBy(() -> scenario.run().apply(fixture)).satisfies(e -> assertThat(Stream.iterate(e, t -> t != null, Throwable::getCause))
                .anyMatch(CoreOnFakes.Crash.class::isInstance));
        var restarted = fixture.core().restart();

        var sandbox = restarted.catalog.find(fixture.id());
        if (scenario.name().equals("delete") && sandbox.isEmpty()) {
            assertNothingLeftOf(restarted, fixture.id());
            return;
        }
        assertThat(sandbox).as("the sandbox is still known").isPresent();
        var state = sandbox.get().state();
        assertThat(scenario.outcomes()).as("its state after the crash: " + state).contains(state.getClass());
        assertThat(restarted.catalog.pendingOperations()).isEmpty();
        assertRuntimeAgrees(restarted, sandbox.get());
        assertEverythingBelongsToAKnownSandbox(restarted);

        assertEveryCheckpointBecomesDurable(restarted, fixture.id());

        // Usable again, with what it held in memory.
        restarted.lifecycle.resume(fixture.id(), Reason.API);
        assertThat(restarted.runtime.status(fixture.id())).isEqualTo(RuntimeStatus.RUNNING);
        if (!scenario.name().equals("start") && !(state instanceof SandboxState.Stopped))
            assertThat(restarted.runtime.memory(fixture.id())).containsEntry("answer", "42");
        for (var child : restarted.catalog.children(fixture.id())) {
            assertRuntimeAgrees(restarted, child);
            assertThat(restarted.runtime.memory(child.id())).as("a fork holds its parent's memory").containsEntry("answer", "42");
        }
        restarted.close();
    }

    /** An upload the crash cut short starts again at the start, and ends with the checkpoint in the durable store. */
    private static void assertEveryCheckpointBecomesDurable(CoreOnFakes core, SandboxId id) {
        for (var checkpoint : core.catalog.checkpointsOf(id)) {
            if (core.catalog.findUpload(checkpoint.id()).isEmpty()) continue; // never asked to be durable
            Await.until("the upload of " + checkpoint.id() + " to end", Duration.ofSeconds(10),
                    () -> core.durable.state(checkpoint.id()).map(CheckpointUpload::durable).orElse(false));
            assertThat(core.host.archive().descriptor(checkpoint.id())).as("its descriptor").isPresent();
        }
    }

    private static void assertRuntimeAgrees(CoreOnFakes core, Sandbox sandbox) {
        var status = core.runtime.status(sandbox.id());
        switch (sandbox.state()) {
            case SandboxState.Running r -> assertThat(status).isEqualTo(RuntimeStatus.RUNNING);
            case SandboxState.Paused p -> assertThat(status).isEqualTo(RuntimeStatus.FROZEN);
            case SandboxState.Standby s -> assertThat(status).isEqualTo(RuntimeStatus.FROZEN);
            case SandboxState.Hibernated h -> {
                assertThat(status).isEqualTo(RuntimeStatus.UNKNOWN);
                assertThat(core.runtime.imageSize(h.checkpoint())).as("its image").isPresent();
                assertThat(core.roots.hasSnapshot(h.checkpoint())).as("its root snapshot").isTrue();
            }
            case SandboxState.Stopped s -> assertThat(status).isEqualTo(RuntimeStatus.UNKNOWN);
            case SandboxState.Deleted d -> throw new AssertionError("a deleted sandbox is still listed: " + sandbox);
        }
        assertThat(core.roots.root(sandbox.id())).as("its root").isPresent();
    }

    private static void assertEverythingBelongsToAKnownSandbox(CoreOnFakes core) {
        var known = core.catalog.all().stream().map(Sandbox::id).collect(Collectors.toSet());
        assertThat(known).containsAll(core.runtime.listOwned());
        assertThat(known).containsAll(core.roots.listRoots());
        assertThat(known).containsAll(core.hostNetwork.listOpen());
        var checkpoints = core.catalog.allCheckpoints().stream().map(c -> c.id()).collect(Collectors.toSet());
        assertThat(checkpoints).as("images of no recorded checkpoint").containsAll(core.runtime.listImages());
        assertThat(checkpoints).as("snapshots of no recorded checkpoint").containsAll(core.roots.listSnapshots());
    }

    private static void assertNothingLeftOf(CoreOnFakes core, SandboxId id) {
        assertThat(core.runtime.status(id)).isEqualTo(RuntimeStatus.UNKNOWN);
        assertThat(core.roots.root(id)).isEmpty();
        assertThat(core.hostNetwork.listOpen()).doesNotContain(id);
        assertThat(core.catalog.pendingOperations()).isEmpty();
    }
}
