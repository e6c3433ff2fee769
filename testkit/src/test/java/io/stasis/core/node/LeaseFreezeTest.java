package io.stasis.core.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.lifecycle.LifecycleService;
import io.stasis.core.spi.SandboxRuntime.RuntimeStatus;
import io.stasis.testkit.core.CoreOnFakes;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A node cut off from the catalog freezes what another node could resume, and thaws what is still its own and running once back. */
class LeaseFreezeTest {
    @TempDir
    Path dir;
    private CoreOnFakes core;

    @BeforeEach
    void start() throws IOException {
        core = new CoreOnFakes(dir.resolve("here"));
    }

    @AfterEach
    void stop() {
        core.close();
    }

    @Test
    void theKeptSandboxesFreezeWhenTheLeaseLapsesAndThawWhenItIsBack() {
        var kept = core.create(Optional.of("kept"));
        var other = core.create(Optional.of("other"));
        var freeze = new LeaseFreeze(core.runtime, core.catalog, () -> Set.of(kept.id()));

        freeze.leaseLost();
        assertThat(core.runtime.status(kept.id())).isEqualTo(RuntimeStatus.FROZEN);
        assertThat(core.runtime.status(other.id())).as("nobody else resumes it").isEqualTo(RuntimeStatus.RUNNING);

        freeze.leaseBack();
        assertThat(core.runtime.status(kept.id())).isEqualTo(RuntimeStatus.RUNNING);
    }

    @Test
    void aSandboxPausedJustBeforeTheCutStaysFrozenAsItsRecordSays() {
        var kept = core.create(Optional.of("kept"));
        var freeze = new LeaseFreeze(core.runtime, core.catalog, () -> Set.of(kept.id()));
        freeze.leaseLost();
        core.lifecycle.pause(kept.id(), LifecycleService.Reason.API);
        freeze.leaseBack();
        assertThat(core.runtime.status(kept.id())).isEqualTo(RuntimeStatus.FROZEN);
    }
}
