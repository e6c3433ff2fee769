package io.stasis.e2b;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.sdk.LifecyclePolicy;
import io.stasis.sdk.ProcessInfo;
import io.stasis.sdk.Resources;
import io.stasis.sdk.SandboxInfo;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ControlPlaneTest {
    private static final Instant CREATED = Instant.parse("2026-12-05T10:00:00Z");

    private static SandboxInfo sandbox(String state, Duration maxAge) {
        return new SandboxInfo("sbx_1", null, "base", state, null, null, CREATED, new Resources(2.0, 512, 128, 2048), Map.of(),
                Map.of("team", "x"), null, null, new LifecyclePolicy(null, null, null, null, null, maxAge, "delete", null, true), 1, null, List.of(),
                "runc", Map.of());
    }

    @Test
    void aSandboxIsRunningOrPausedAndEndsAtItsMaxAge() {
        var running = ControlPlane.detail(sandbox("running", Duration.ofMinutes(5)));
        assertThat(running.state()).isEqualTo("running");
        assertThat(running.endAt()).isEqualTo("2026-12-05T10:05:00Z");
        assertThat(running.cpuCount()).isEqualTo(2.0);
        assertThat(running.memoryMB()).isEqualTo(512);
        assertThat(running.diskSizeMB()).isEqualTo(2048);
        assertThat(running.metadata()).containsEntry("team", "x");
        for (String asleep : new String[] {"paused", "standby", "hibernated", "stopped"})
            assertThat(ControlPlane.detail(sandbox(asleep, null)).state()).isEqualTo("paused");
        assertThat(ControlPlane.detail(sandbox("running", null)).endAt()).isNull();
    }

    @Test
    void theDomainIsWhatFollowsThePortAndSandboxInAPreviewUrl() {
        assertThat(E2bPorts.domainOf("http://{port}-sbx-abc.localhost:7071/")).isEqualTo("localhost:7071");
        assertThat(E2bPorts.domainOf("https://{port}-sbx-abc.preview.example.com/")).isEqualTo("preview.example.com");
    }

    @Test
    void anEndSaysHowTheProcessEndedAsGoWordsIt() {
        var exited = new ProcessInfo("prc_1", 7, List.of("true"), null, null, CREATED, "exited", 3, null, true, null, 0, 0, false, false);
        assertThat(ProcessRpc.endOf(exited)).containsEntry("exitCode", 3).containsEntry("exited", true).containsEntry("status", "exit status 3");
        var killed = new ProcessInfo("prc_1", 7, List.of("sleep"), null, null, CREATED, "exited", 137, "KILL", true, null, 0, 0, false, false);
        assertThat(ProcessRpc.endOf(killed)).containsEntry("exitCode", -1).containsEntry("exited", false).containsEntry("status", "signal: killed");
    }
}
