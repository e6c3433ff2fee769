package io.stasis.core.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.stasis.testkit.core.CoreOnFakes;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SandboxUsageTest {
    @TempDir
    Path dir;
    private CoreOnFakes core;
    private SandboxUsage usage;

    @BeforeEach
    void start() {
        core = new CoreOnFakes(dir);
        usage = new SandboxUsage(core.sandboxes, core.runtime, core.roots, core.clock);
    }

    @AfterEach
    void stop() {
        core.close();
    }

    @Test
    void theCpuShareIsSinceTheLastReadingAndTheFirstSinceTheSandboxWasMade() {
        var sandbox = core.create();
        double cpus = sandbox.resources().cpus();
        core.clock.advance(Duration.ofSeconds(10));
        core.runtime.burnCpu(sandbox.id(), Duration.ofSeconds(5).multipliedBy((long) cpus));
        var first = usage.read(sandbox.id().value());
        assertThat(first.cpuUsedPercent()).isCloseTo(50, within(0.5));
        assertThat(first.cpuTime()).isEqualTo(Duration.ofSeconds(5).multipliedBy((long) cpus));
        assertThat(first.memoryBytes()).isPositive();
        assertThat(first.memoryLimitBytes()).isEqualTo((long) sandbox.resources().memoryMb() << 20);
        assertThat(first.diskLimitBytes()).isEqualTo(sandbox.resources().diskBytes());
        assertThat(first.disk()).isEqualTo(core.roots.diskUsage(sandbox.id()).orElseThrow());

        core.clock.advance(Duration.ofSeconds(4));
        core.runtime.burnCpu(sandbox.id(), Duration.ofSeconds(1).multipliedBy((long) cpus));
        assertThat(usage.read(sandbox.id().value()).cpuUsedPercent()).isCloseTo(25, within(0.5));
        core.clock.advance(Duration.ofSeconds(4));
        assertThat(usage.read(sandbox.id().value()).cpuUsedPercent()).as("idle since").isCloseTo(0, within(0.5));
    }

    @Test
    void aSandboxInStandbyShowsItsMemoryInSwapAndAHibernatedOneNothing() {
        var sandbox = core.create();
        core.lifecycle.standby(sandbox.id(), LifecycleService.Reason.API);
        var standby = usage.read(sandbox.id().value());
        assertThat(standby.memoryBytes()).isZero();
        assertThat(standby.swappedBytes()).isPositive();
        core.lifecycle.hibernate(sandbox.id(), LifecycleService.Reason.API);
        var hibernated = usage.read(sandbox.id().value());
        assertThat(hibernated.memoryBytes()).isZero();
        assertThat(hibernated.swappedBytes()).isZero();
        assertThat(hibernated.cpuUsedPercent()).isZero();
    }

    @Test
    void theShareIsBoundedAndZeroWithoutElapsedTime() {
        assertThat(SandboxUsage.share(Duration.ofSeconds(3), Duration.ofSeconds(1), 2)).isEqualTo(100);
        assertThat(SandboxUsage.share(Duration.ofSeconds(1), Duration.ZERO, 2)).isZero();
        assertThat(SandboxUsage.share(Duration.ofSeconds(1), Duration.ofSeconds(2), 0.5)).isEqualTo(100);
        assertThat(SandboxUsage.share(Duration.ofMillis(250), Duration.ofSeconds(1), 0.5)).isCloseTo(50, within(0.001));
    }
}
