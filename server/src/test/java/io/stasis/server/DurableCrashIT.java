package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.testkit.Await;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Crashes around uploads: a background upload cut short by the death of the service is restarted
 * by the next start, and a {@code durable: true} checkpoint whose call returned is restorable on
 * another instance even when the service is killed with SIGKILL right after.
 */
@Tag("root")
class DurableCrashIT {

    @Test
    void nothingAcknowledgedIsLostWhenTheServiceDiesDuringOrAfterAnUpload() throws Exception {
        Path dataDir = Files.createTempDirectory("stasis-durable-crash");
        Path blobs = Files.createTempDirectory("stasis-durable-crash-blobs");
        Path log = Path.of("target", "durable-crash-it-service.log").toAbsolutePath();
        String sandbox = null;
        try {
            String background;
            try (var first = ServiceProcess.start(dataDir, log, Map.of("STASIS_FAULT_POINT", "upload.after-root"), "--blob-dir", blobs.toString());
                 var api = new RawApi(first.url, key(dataDir))) {
                sandbox = api.post("/v1/sandboxes", "{\"lifecycle\": {\"pauseAfterIdle\": null, \"hibernateAfterIdle\": null}}").get("id").asText();
                api.sh(sandbox, "echo first > /root/state");
                background = api.post("/v1/sandboxes/" + sandbox + "/checkpoints", "{\"memory\": false}").get("id").asText();
                assertThat(first.awaitDeath(Duration.ofSeconds(60))).as("the service halted at upload.after-root").isTrue();
            }
            assertThat(Files.exists(blobs.resolve("checkpoints/" + background + ".json"))).as("no descriptor before the crash").isFalse();
            String acknowledged;
            try (var second = ServiceProcess.start(dataDir, log, Map.of(), "--blob-dir", blobs.toString());
                 var api = new RawApi(second.url, key(dataDir))) {
                Await.until("the interrupted upload restarted and finished", Duration.ofSeconds(60),
                        () -> api.get("/v1/checkpoints/" + background).get("durable").asBoolean());
                api.sh(sandbox, "echo second > /root/state");
                var made = api.post("/v1/sandboxes/" + sandbox + "/checkpoints", "{\"memory\": true, \"durable\": true}");
                assertThat(made.get("durable").asBoolean()).isTrue();
                acknowledged = made.get("id").asText();
                second.kill(); // SIGKILL right after the acknowledgement
            }
            try (var other = ServiceFixture.start("--blob-dir", blobs.toString()); var api = new RawApi(other.url, other.rootKey)) {
                String restored = api.post("/v1/sandboxes", "{\"fromCheckpoint\": \"" + acknowledged + "\"}").get("id").asText();
                assertThat(api.sh(restored, "cat /root/state")).isEqualTo("second\n");
                String early = api.post("/v1/sandboxes", "{\"fromCheckpoint\": \"" + background + "\"}").get("id").asText();
                assertThat(api.sh(early, "cat /root/state")).isEqualTo("first\n");
            }
        } finally {
            // The killed service left its sandbox running: a last start removes it.
            ServiceProcess.removeLeftovers(dataDir, log, sandbox, "--blob-dir", blobs.toString());
            ServiceFixture.deleteTree(blobs);
        }
    }

    private static String key(Path dataDir) throws IOException {
        return Files.readString(dataDir.resolve("root.key")).strip();
    }
}
