package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.testkit.Await;
import io.stasis.testkit.HostLeaks;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Forks of a memory checkpoint restored ahead (spares): they wait frozen, a fork thaws one, the
 * checkpoint refills them, and none outlives its checkpoint, its sandbox, the service or a
 * SIGKILL of the service.
 */
@Tag("root")
class ForkSparesIT {
    private static final String CALM = "{\"lifecycle\": {\"pauseAfterIdle\": null, \"hibernateAfterIdle\": null}}";
    /** A line every 0.1 s while the processes run. */
    private static final String COUNTER = "i=0; while :; do i=$((i+1)); echo $i; sleep 0.1; done >> /root/counter.log 2>/dev/null &";
    private static final Duration READY = Duration.ofSeconds(60);

    @Test
    void aForkTakesAFrozenSpareAndTheCheckpointRefillsIt() throws Exception {
        Path dataDir = Files.createTempDirectory("stasis-spares-it");
        try (var service = ServiceFixture.startIn(dataDir, "--warm-pool", "0"); var api = new RawApi(service.url, service.rootKey)) {
            String parent = api.post("/v1/sandboxes", CALM).get("id").asText();
            api.sh(parent, COUNTER);
            Await.until("the counter", Duration.ofSeconds(10), () -> lines(api, parent) > 3);

            JsonNode checkpoint = api.post("/v1/sandboxes/" + parent + "/checkpoints", "{\"memory\": true, \"spares\": 3}");
            String cid = checkpoint.get("id").asText();
            assertThat(checkpoint.get("spares").get("wanted").asInt()).isEqualTo(3);
            Await.until("three spares", READY, () -> ready(api, cid) == 3);
            assertThat(spareIds(dataDir, api)).hasSize(3);
            for (SandboxId spare : spareIds(dataDir, api)) {
                assertThat(cgroupFile("freezer", spare, "freezer.state")).as("a spare waits frozen").isEqualTo("FROZEN");
                // In standby: its memory in swap, only kernel memory (~0.4 MiB for this one) charged.
                Await.until("the spare's memory paged out", Duration.ofSeconds(30),
                        () -> Long.parseLong(cgroupFile("memory", spare, "memory.usage_in_bytes")) < (3L << 19));
            }
            int atCheckpoint = lines(api, parent);
            // Fifteen lines' worth, had the spares not been frozen; and the service, its refill done, idles meanwhile.
            var cpuBefore = ProcessHandle.current().info().totalCpuDuration().orElseThrow();
            Thread.sleep(1500);
            var cpu = ProcessHandle.current().info().totalCpuDuration().orElseThrow().minus(cpuBefore);
            System.out.println("CPU while three spares wait: " + cpu.toMillis() + " ms");
            assertThat(cpu).as("the service's CPU while three spares wait").isLessThan(Duration.ofMillis(1000));

            var forks = api.post("/v1/sandboxes/" + parent + "/fork", "{\"checkpoint\": \"" + cid + "\", \"count\": 2}").get("items");
            assertThat(forks).hasSize(2);
            for (JsonNode fork : forks) {
                String id = fork.get("id").asText();
                assertThat(fork.get("state").asText()).isEqualTo("running");
                assertThat(lines(api, id)).as("a spare waits frozen: its counter did not run on").isLessThan(atCheckpoint + 8);
                int before = lines(api, id);
                Await.until("the fork counting on", Duration.ofSeconds(10), () -> lines(api, id) > before);
                assertThat(api.sh(id, "hostname").strip()).isEqualTo(new SandboxId(id).hostname());
                assertThat(ksmStat(new SandboxId(id), "ksm_merge_any")).as("no page sharing unless asked for").containsOnly("no");
            }
            Await.until("the spares refilled", READY, () -> ready(api, cid) == 3);

            // More forks than spares: the spares, and restores for the rest.
            var many = api.post("/v1/sandboxes/" + parent + "/fork", "{\"checkpoint\": \"" + cid + "\", \"count\": 5}").get("items");
            assertThat(many).hasSize(5);
            for (JsonNode fork : many) assertThat(api.sh(fork.get("id").asText(), "wc -l < /root/counter.log").strip()).isNotEmpty();
            Await.until("the spares refilled again", READY, () -> ready(api, cid) == 3);

            var fewer = api.call("PUT", "/v1/checkpoints/" + cid + "/spares", "{\"count\": 1}").ok();
            assertThat(fewer.get("spares").get("wanted").asInt()).isEqualTo(1);
            assertThat(fewer.get("spares").get("ready").asInt()).isEqualTo(1);
            assertThat(spareIds(dataDir, api)).hasSize(1);

            // None outlives its checkpoint.
            api.call("DELETE", "/v1/checkpoints/" + cid, null);
            assertThat(spareIds(dataDir, api)).isEmpty();
            // Not even those being restored when it went: the delete waits for them.
            String restoring = api.post("/v1/sandboxes/" + parent + "/checkpoints", "{\"memory\": true, \"spares\": 3}").get("id").asText();
            api.call("DELETE", "/v1/checkpoints/" + restoring, null);
            assertThat(spareIds(dataDir, api)).as("spares being restored when their checkpoint was deleted").isEmpty();

            // Nor its sandbox.
            String second = api.post("/v1/sandboxes/" + parent + "/checkpoints", "{\"memory\": true, \"spares\": 2}").get("id").asText();
            Await.until("two spares", READY, () -> ready(api, second) == 2);
            var spares = spareIds(dataDir, api);
            assertThat(spares).hasSize(2);
            api.call("DELETE", "/v1/sandboxes/" + parent, null);
            assertThat(spareIds(dataDir, api)).isEmpty();
            assertThat(HostLeaks.processesOf(spares)).isEmpty();
            assertThat(HostLeaks.cgroupsOf(spares)).isEmpty();
        }
    }

    @Test
    void withPageSharingForksOfOneCheckpointShareTheirUnwrittenPages() throws Exception {
        String before = Files.readString(KSM_RUN).strip();
        try (var service = ServiceFixture.start("--warm-pool", "0", "--fork-page-sharing"); var api = new RawApi(service.url, service.rootKey)) {
            assertThat(Files.readString(KSM_RUN).strip()).isEqualTo("1");
            String parent = api.post("/v1/sandboxes", CALM).get("id").asText();
            // 8 MB of random text in a shell's own memory: anonymous pages, the same in every fork.
            api.post("/v1/sandboxes/" + parent + "/processes", "{\"cmd\": [\"sh\", \"-c\", \"x=$(head -c 4000000 /dev/urandom | od -An -tx1 "
                    + "| tr -d ' \\\\n'); echo ${#x} > /tmp/held; while :; do sleep 1000; done\"]}");
            Await.until("the memory held", Duration.ofSeconds(60), () -> !api.sh(parent, "cat /tmp/held 2>/dev/null; true").isBlank());
            assertThat(api.sh(parent, "cat /tmp/held").strip()).isEqualTo("8000000");
            String cid = api.post("/v1/sandboxes/" + parent + "/checkpoints", "{\"memory\": true}").get("id").asText();
            var forks = api.post("/v1/sandboxes/" + parent + "/fork", "{\"checkpoint\": \"" + cid + "\", \"count\": 3}").get("items");
            for (JsonNode fork : forks) {
                var id = new SandboxId(fork.get("id").asText());
                assertThat(ksmStat(id, "ksm_merge_any")).as("restored processes are marked for merging").containsOnly("yes");
                // At least half of the 8 MB shared with the other forks, once ksmd has been over them.
                Await.until("the fork's pages merged", Duration.ofSeconds(90),
                        () -> ksmStat(id, "ksm_merging_pages").stream().mapToLong(Long::parseLong).sum() >= 1000);
            }
            assertThat(api.sh(forks.get(0).get("id").asText(), "echo alive")).isEqualTo("alive\n");
        }
        assertThat(Files.readString(KSM_RUN).strip()).as("the switch as it was").isEqualTo(before);
    }

    @Test
    void sparesAreRefusedWhereTheyCannotBe() throws Exception {
        try (var service = ServiceFixture.start("--warm-pool", "0", "--fork-spares-max", "4"); var api = new RawApi(service.url, service.rootKey)) {
            String id = api.post("/v1/sandboxes", CALM).get("id").asText();
            String base = "/v1/sandboxes/" + id + "/checkpoints";
            assertThat(api.call("POST", base, "{\"memory\": false, \"spares\": 1}").errorCode()).isEqualTo("invalid_request");
            assertThat(api.call("POST", base, "{\"memory\": true, \"spares\": -1}").errorCode()).isEqualTo("invalid_request");
            var tooMany = api.call("POST", base, "{\"memory\": true, \"spares\": 5}");
            assertThat(tooMany.status()).isEqualTo(422);
            assertThat(tooMany.body().toString()).contains("at most 4");
            assertThat(api.get(base).get("items")).as("a refused checkpoint is not taken").isEmpty();
            String cid = api.post(base, "{\"memory\": true}").get("id").asText();
            assertThat(api.call("PUT", "/v1/checkpoints/" + cid + "/spares", "{}").errorCode()).isEqualTo("invalid_request");
            assertThat(api.call("PUT", "/v1/checkpoints/" + cid + "/spares", "{\"count\": \"x\"}").status()).isEqualTo(422);
            assertThat(api.call("PUT", "/v1/checkpoints/ckpt_nosuch/spares", "{\"count\": 1}").errorCode()).isEqualTo("checkpoint_not_found");
            String files = api.post(base, "{\"memory\": false}").get("id").asText();
            assertThat(api.call("PUT", "/v1/checkpoints/" + files + "/spares", "{\"count\": 1}").errorCode()).isEqualTo("invalid_request");
            assertThat(api.call("PUT", "/v1/checkpoints/" + cid + "/spares", "{\"count\": 0}").ok().get("spares").get("wanted").asInt()).isZero();
        }
    }

    @Test
    void sparesComeBackAfterTheServiceIsKilled() throws Exception {
        Path dataDir = Files.createTempDirectory("stasis-spares-kill-it");
        Path log = Path.of("target", "fork-spares-it-service.log").toAbsolutePath();
        Set<SandboxId> before;
        String parent;
        String cid;
        try {
            try (var first = ServiceProcess.start(dataDir, log, Map.of(), "--warm-pool", "0")) {
                try (var api = new RawApi(first.url, Files.readString(dataDir.resolve("root.key")).strip())) {
                    parent = api.post("/v1/sandboxes", CALM).get("id").asText();
                    api.sh(parent, COUNTER);
                    cid = api.post("/v1/sandboxes/" + parent + "/checkpoints", "{\"memory\": true, \"spares\": 2}").get("id").asText();
                    Await.until("two spares", READY, () -> ready(api, cid) == 2);
                    before = spareIds(dataDir, api);
                }
                first.kill();
            }
            try (var second = ServiceProcess.start(dataDir, log, Map.of(), "--warm-pool", "0")) {
                try (var api = new RawApi(second.url, Files.readString(dataDir.resolve("root.key")).strip())) {
                    Await.until("the spares restored again", READY, () -> ready(api, cid) == 2);
                    var after = spareIds(dataDir, api);
                    assertThat(after).hasSize(2).doesNotContainAnyElementsOf(before);
                    assertThat(HostLeaks.processesOf(before)).as("the spares of before the kill, orphans").isEmpty();
                    assertThat(HostLeaks.cgroupsOf(before)).isEmpty();
                    String fork = api.post("/v1/sandboxes/" + parent + "/fork", "{\"checkpoint\": \"" + cid + "\"}").get("items").get(0).get("id").asText();
                    assertThat(after).contains(new SandboxId(fork));
                    assertThat(api.sh(fork, "wc -l < /root/counter.log").strip()).isNotEmpty();
                    api.call("DELETE", "/v1/sandboxes/" + fork, null);
                    api.call("DELETE", "/v1/sandboxes/" + parent, null);
                    assertThat(spareIds(dataDir, api)).isEmpty();
                    assertThat(HostLeaks.processesOf(after)).isEmpty();
                }
            }
            assertThat(HostLeaks.mountsUnder(dataDir)).isEmpty();
        } finally {
            ServiceFixture.deleteTree(dataDir);
        }
    }

    private static final Path KSM_RUN = Path.of("/sys/kernel/mm/ksm/run");

    /** One field of /proc/PID/ksm_stat (or the file ksm_merging_pages) for each process of the sandbox. */
    private static List<String> ksmStat(SandboxId sandbox, String field) {
        var out = new ArrayList<String>();
        for (String pid : cgroupFile("pids", sandbox, "cgroup.procs").split("\\s+")) {
            try {
                if (field.equals("ksm_merging_pages")) out.add(Files.readString(Path.of("/proc", pid, "ksm_merging_pages")).strip());
                else for (String line : Files.readAllLines(Path.of("/proc", pid, "ksm_stat")))
                    if (line.startsWith(field + ":")) out.add(line.substring(field.length() + 1).strip());
            } catch (IOException e) {
                // the process ended meanwhile (a sleep of the counter's loop)
            }
        }
        return out;
    }

    private static String cgroupFile(String controller, SandboxId sandbox, String file) {
        try {
            return Files.readString(Path.of("/sys/fs/cgroup", controller, "stasis", sandbox.value(), file)).strip();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static int ready(RawApi api, String checkpoint) {
        return api.get("/v1/checkpoints/" + checkpoint).get("spares").get("ready").asInt();
    }

    private static int lines(RawApi api, String sandbox) {
        return Integer.parseInt(api.sh(sandbox, "wc -l < /root/counter.log").strip());
    }

    /** The sandboxes the runtime holds that the API does not list: the spares (there is no warm pool here). */
    private static Set<SandboxId> spareIds(Path dataDir, RawApi api) throws IOException {
        var listed = new ArrayList<String>();
        for (JsonNode s : api.get("/v1/sandboxes?limit=1000").get("items")) listed.add(s.get("id").asText());
        try (Stream<Path> bundles = Files.list(dataDir.resolve("runtime").resolve("bundles"))) {
            return bundles.map(p -> p.getFileName().toString()).filter(name -> name.startsWith("sbx_") && !listed.contains(name))
                    .map(SandboxId::new).collect(Collectors.toSet());
        }
    }
}
