package io.stasis.core.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.policy.LifecyclePolicy;
import io.stasis.core.tenant.TenantId;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/** A sandbox's generation: one more at every change of state and every checkpoint, never less. */
class SandboxGenerationPropertyTest {
    private static final Sandbox MADE = new Sandbox(SandboxId.random(), Optional.empty(), "tiny", SandboxState.RUNNING,
            Instant.parse("2026-12-02T00:00:00Z"), Resources.DEFAULT, Map.of(), Map.of(), Optional.empty(), Optional.empty(),
            LifecyclePolicy.DEFAULT, TenantId.DEFAULT, RuntimeKind.RUNC);

    @Property
    void itCountsTheChangesOfStateAndTheCheckpoints(@ForAll("steps") List<Optional<SandboxState>> steps) {
        var sandbox = MADE;
        long changes = 0;
        for (var step : steps) {
            var before = sandbox;
            if (step.isEmpty()) {
                sandbox = sandbox.nextGeneration();
                changes++;
            } else {
                sandbox = sandbox.withState(step.get());
                if (!step.get().equals(before.state())) changes++;
            }
            assertThat(sandbox.generation()).isGreaterThanOrEqualTo(before.generation());
            assertThat(sandbox.withLifecycle(LifecyclePolicy.DEFAULT).generation()).isEqualTo(sandbox.generation());
        }
        assertThat(sandbox.generation()).isEqualTo(1 + changes);
    }

    /** Each step: a state to go to, or empty for a checkpoint. */
    @Provide
    Arbitrary<List<Optional<SandboxState>>> steps() {
        var states = Arbitraries.<SandboxState>of(SandboxState.RUNNING, SandboxState.PAUSED, SandboxState.STANDBY,
                new SandboxState.Hibernated(new CheckpointId("ckpt_0000000000000001"), 10, Instant.EPOCH),
                new SandboxState.Stopped("api"));
        return states.optional(0.8).list().ofMaxSize(30);
    }

    @Test
    void aNewSandboxIsAtGenerationOneAndNoneIsBelow() {
        assertThat(MADE.generation()).isEqualTo(1);
        assertThatThrownBy(() -> new Sandbox(MADE.id(), MADE.name(), MADE.template(), MADE.state(), MADE.createdAt(), MADE.resources(),
                MADE.env(), MADE.metadata(), MADE.parentId(), MADE.checkpointId(), MADE.lifecycle(), MADE.tenant(), 0, RuntimeKind.RUNC))
                .hasMessageContaining("generation");
    }
}
