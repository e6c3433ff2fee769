package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.sandbox.SandboxId;
import io.stasis.sdk.StasisClient;
import io.stasis.testkit.HostLeaks;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Sandboxes outlive the service: killed with SIGKILL and started again, it finds them running. */
@Tag("root")
class RestartIT {

    @Test
    void sandboxesSurviveAKilledServiceAndAreAdoptedOnRestart() throws Exception {
        Path dataDir = Files.createTempDirectory("stasis-restart-it");
        Path log = Path.of("target", "restart-it-service.log").toAbsolutePath();
        SandboxId id;
        try {
            try (var first = ServiceProcess.start(dataDir, log)) {
                String key = Files.readString(dataDir.resolve("root.key")).strip();
                try (var client = StasisClient.connect(first.url, key)) {
                    var sandbox = client.sandboxes().create();
                    id = new SandboxId(sandbox.id());
                    sandbox.exec("sh", "-c", "echo kept > /root/state; sleep 1000 &");
                    try (var api = new RawApi(first.url, key)) {
                        api.post("/v1/sandboxes/" + sandbox.id() + "/processes", "{\"cmd\": [\"sh\", \"-c\", \"echo before; sleep 1000\"], \"tag\": \"bg\"}");
                    }
                }
                first.kill();
                assertThat(HostLeaks.processesOf(Set.of(id))).as("sandbox processes after SIGKILL of the service").isNotEmpty();
            }
            try (var second = ServiceProcess.start(dataDir, log)) {
                String key = Files.readString(dataDir.resolve("root.key")).strip();
                try (var client = StasisClient.connect(second.url, key)) {
                    var sandbox = client.sandboxes().get(id.value());
                    assertThat(sandbox.state()).isEqualTo("running");
                    assertThat(sandbox.exec("cat", "/root/state").stdout()).isEqualTo("kept\n");
                    assertThat(sandbox.exec("sh", "-c", "ps -o comm | grep -c sleep").stdout().strip()).isEqualTo("2");
                    try (var api = new RawApi(second.url, key)) {
                        var process = api.get("/v1/sandboxes/" + id + "/processes").get("items").get(0);
                        assertThat(process.get("tag").asText()).isEqualTo("bg");
                        assertThat(process.get("status").asText()).isEqualTo("running");
                        assertThat(api.get("/v1/sandboxes/" + id + "/processes/" + process.get("pid").asLong() + "/output").get("stdout").asText())
                                .isEqualTo("before\n");
                    }
                    sandbox.delete();
                }
            }
            assertThat(HostLeaks.processesOf(Set.of(id))).isEmpty();
            assertThat(HostLeaks.cgroupsOf(Set.of(id))).isEmpty();
            assertThat(HostLeaks.mountsUnder(dataDir)).isEmpty();
            assertThat(HostLeaks.loopDevicesBackedBy(dataDir)).isEmpty();
        } finally {
            ServiceFixture.deleteTree(dataDir);
        }
    }
}
