package io.stasis.core.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.tenant.TenantId;
import io.stasis.testkit.core.CoreOnFakes;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A sandbox whose processes ended by themselves is stopped at the next pass, with why, and an event says so. */
class ExitWatchTest {
    @TempDir
    Path dir;
    private CoreOnFakes core;
    private ExitWatch watch;

    @BeforeEach
    void start() {
        core = new CoreOnFakes(dir);
        watch = new ExitWatch(core.catalog, core.runtime, core.sandboxes, Duration.ofSeconds(1));
    }

    @AfterEach
    void stop() {
        watch.close();
        core.close();
    }

    private SandboxState stateOf(Sandbox sandbox) {
        return core.catalog.find(sandbox.id()).orElseThrow().state();
    }

    private Optional<String> lastLifecycleReason(Sandbox sandbox) {
        var events = core.events.after(0, Optional.of(sandbox.id()), TenantId.DEFAULT, 1000);
        return events.reversed().stream().filter(e -> e.type().equals("lifecycle")).findFirst()
                .map(e -> String.valueOf(e.data().get("to")) + "/" + e.data().get("reason"));
    }

    @Test
    void anInitThatExitedStopsTheSandboxWithItsReason() {
        var dying = core.create();
        var living = core.create();
        core.runtime.killInit(dying.id());

        watch.checkAll();

        assertThat(stateOf(dying)).isEqualTo(new SandboxState.Stopped("init_exited"));
        assertThat(lastLifecycleReason(dying)).contains("stopped/init_exited");
        assertThat(stateOf(living)).isEqualTo(new SandboxState.Running());
    }

    @Test
    void aSandboxTheOutOfMemoryKillerEndedSaysSo() {
        var hog = core.create();
        core.runtime.killByOutOfMemory(hog.id());

        watch.checkAll();

        assertThat(stateOf(hog)).isEqualTo(new SandboxState.Stopped("out_of_memory"));
        assertThat(lastLifecycleReason(hog)).contains("stopped/out_of_memory");
    }

    @Test
    void pausedAndHibernatedSandboxesAreLeftAlone() {
        var paused = core.create();
        core.lifecycle.pause(paused.id(), LifecycleService.Reason.API);
        var hibernated = core.create();
        core.lifecycle.hibernate(hibernated.id(), LifecycleService.Reason.API);

        watch.checkAll();

        assertThat(stateOf(paused).wireName()).isEqualTo("paused");
        assertThat(stateOf(hibernated).wireName()).isEqualTo("hibernated");
    }
}
