package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.sandbox.SandboxId;
import io.stasis.sdk.StasisClient;
import io.stasis.testkit.Await;
import io.stasis.testkit.HostLeaks;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Tag;

/** Sandboxes outlive the service: killed with SIGKILL and started again, it finds them running. */
@Tag("root")
class RestartIT {

    @EachRuntime
    void sandboxesSurviveAKilledServiceAndAreAdoptedOnRestart(String runtime) throws Exception {
        ServiceFixture.assumeRuntime(runtime);
        Path dataDir = Files.createTempDirectory("stasis-restart-it");
        Path log = Path.of("target", "restart-it-service-" + runtime + ".log").toAbsolutePath();
        SandboxId id;
        long counter;
        long lastOffset;
        var counted = new StringBuilder();
        String address;
        try {
            try (var first = ServiceProcess.start(dataDir, log, Map.of(), "--dns-names", "restart.test=10.254.1.2")) {
                String key = Files.readString(dataDir.resolve("root.key")).strip();
                try (var client = StasisClient.connect(first.url, key)) {
                    String created;
                    try (var api = new RawApi(first.url, key)) {
                        created = api.post("/v1/sandboxes", "{\"runtime\": \"" + runtime + "\", \"network\": {\"egress\": {\"default\": \"deny\", \"allow\": [\"restart.test\"]}}}")
                                .get("id").asText();
                    }
                    var sandbox = client.sandboxes().get(created);
                    id = new SandboxId(sandbox.id());
                    sandbox.exec("sh", "-c", "echo kept > /root/state; sleep 1000 &");
                    try (var api = new RawApi(first.url, key)) {
                        api.post("/v1/sandboxes/" + sandbox.id() + "/processes", "{\"cmd\": [\"sh\", \"-c\", \"echo before; sleep 1000\"], \"tag\": \"bg\"}");
                        counter = api.post("/v1/sandboxes/" + sandbox.id() + "/processes",
                                "{\"cmd\": [\"sh\", \"-c\", \"i=0; while [ $i -lt 400 ]; do i=$((i+1)); echo $i; sleep 0.01; done\"], \"tag\": \"counter\"}")
                                .get("pid").asLong();
                        long target = counter;
                        Await.until("some counting", Duration.ofSeconds(10), () ->
                                api.get("/v1/sandboxes/" + sandbox.id() + "/processes/" + target + "/output").get("stdoutOffset").asLong() > 20);
                        var read = api.get("/v1/sandboxes/" + sandbox.id() + "/processes/" + counter + "/output");
                        counted.append(read.get("stdout").asText());
                        lastOffset = read.get("stdoutOffset").asLong();
                        address = api.get("/v1/sandboxes/" + sandbox.id() + "/network").get("address").asText();
                    }
                }
                first.kill();
                assertThat(HostLeaks.processesOf(Set.of(id))).as("sandbox processes after SIGKILL of the service").isNotEmpty();
            }
            try (var second = ServiceProcess.start(dataDir, log, Map.of(), "--dns-names", "restart.test=10.254.1.2")) {
                String key = Files.readString(dataDir.resolve("root.key")).strip();
                try (var client = StasisClient.connect(second.url, key)) {
                    var sandbox = client.sandboxes().get(id.value());
                    try {
                        assertThat(sandbox.state()).isEqualTo("running");
                        assertThat(sandbox.exec("cat", "/root/state").stdout()).isEqualTo("kept\n");
                        // The network as it was: same address, the policy back in the rebuilt table, the resolver answering.
                        try (var api = new RawApi(second.url, key)) {
                            assertThat(api.get("/v1/sandboxes/" + id + "/network").get("address").asText()).isEqualTo(address);
                        }
                        assertThat(sandbox.exec("sh", "-c", "nslookup restart.test 2>&1; true").stdout()).contains("10.254.1.2");
                        assertThat(sandbox.exec("sh", "-c", "ps -o args | grep -c '^sleep 1000'").stdout().strip()).isEqualTo("2");
                        try (var api = new RawApi(second.url, key)) {
                            var process = api.get("/v1/sandboxes/" + id + "/processes").get("items").get(0);
                            assertThat(process.get("tag").asText()).isEqualTo("bg");
                            assertThat(process.get("status").asText()).isEqualTo("running");
                            assertThat(api.get("/v1/sandboxes/" + id + "/processes/" + process.get("pid").asLong() + "/output").get("stdout").asText())
                                    .isEqualTo("before\n");
                            var rest = api.get("/v1/sandboxes/" + id + "/processes/" + counter + "/wait?timeoutMs=20000");
                            assertThat(rest.get("exitCode").asInt()).isZero();
                            var after = api.get("/v1/sandboxes/" + id + "/processes/" + counter + "/output?offset=" + lastOffset);
                            counted.append(after.get("stdout").asText());
                            var expected = new StringBuilder();
                            for (int i = 1; i <= 400; i++) expected.append(i).append('\n');
                            assertThat(counted.toString()).as("read up to an offset before the kill, on from it after: nothing lost or repeated")
                                    .isEqualTo(expected.toString());
                        }
                    } finally {
                        sandbox.delete(); // also on a failure: a sandbox left running would keep the pool mounted
                    }
                }
            }
            assertThat(HostLeaks.processesOf(Set.of(id))).isEmpty();
            assertThat(HostLeaks.cgroupsOf(Set.of(id))).isEmpty();
            assertThat(HostLeaks.mountsUnder(dataDir)).isEmpty();
            assertThat(HostLeaks.loopDevicesBackedBy(dataDir, Duration.ofSeconds(15))).isEmpty();
        } finally {
            ServiceFixture.deleteTree(dataDir);
        }
    }
}
