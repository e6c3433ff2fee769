package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.stasis.core.policy.Durations;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.testkit.Await;
import io.stasis.testkit.CounterLoop;
import io.stasis.testkit.HostLeaks;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Pause, hibernate, checkpoints, forks, auto-resume and the idle policy, end to end through the REST API. */
@Tag("root")
class LiveStateApiIT {
    private static final String COUNTER = CounterLoop.SCRIPT;
    private static ServiceFixture service;
    private static RawApi api;

    @BeforeAll
    static void start() throws Exception {
        service = ServiceFixture.start("--idle-check", "200ms");
        api = new RawApi(service.url, service.rootKey);
    }

    @AfterEach
    void deleteSandboxes() {
        service.deleteSandboxes();
    }

    @AfterAll
    static void stop() {
        api.close();
        service.close();
    }

    private static String create(String body) {
        return api.post("/v1/sandboxes", body).get("id").asText();
    }

    private static String create(String runtime, String body) {
        return create(ServiceFixture.inRuntime(runtime, body));
    }

    /** A sandbox whose default idle policy will not interfere (never pauses by itself). */
    private static String calmSandbox() {
        return calmSandbox("runc");
    }

    private static String calmSandbox(String runtime) {
        return create(runtime, "{\"lifecycle\": {\"pauseAfterIdle\": null, \"hibernateAfterIdle\": null}}");
    }

    /** The counter's value; -1 before the loop wrote it first. */
    private static long count(String id) {
        String text = api.sh(id, "cat /tmp/count 2>/dev/null; true").strip();
        return text.isEmpty() ? -1 : Long.parseLong(text);
    }

    private static String state(String id) {
        return api.get("/v1/sandboxes/" + id).get("state").asText();
    }

    @EachRuntime
    void pauseFreezesAndResumeContinues(String runtime) {
        String id = calmSandbox(runtime);
        api.sh(id, COUNTER);
        Await.until("counting", Duration.ofSeconds(10), () -> count(id) > 3);
        var paused = api.post("/v1/sandboxes/" + id + "/pause", null);
        assertThat(paused.get("state").asText()).isEqualTo("paused");
        assertThat(api.post("/v1/sandboxes/" + id + "/pause", null).get("state").asText()).as("idempotent").isEqualTo("paused");
        String frozenAt = readCounterFile(id);
        LockSupport.parkNanos(Duration.ofMillis(500).toNanos()); // nothing may move meanwhile
        assertThat(readCounterFile(id)).isEqualTo(frozenAt);
        assertThat(api.post("/v1/sandboxes/" + id + "/resume", null).get("state").asText()).isEqualTo("running");
        long resumed = Long.parseLong(readCounterFile(id));
        assertThat(resumed).isGreaterThanOrEqualTo(Long.parseLong(frozenAt));
        Await.until("counting again", Duration.ofSeconds(10), () -> count(id) > resumed);
    }

    /** Reads the counter from the root on the host, without waking the sandbox. */
    private static String readCounterFile(String id) {
        var file = service.dataDir.resolve("btrfs/roots/" + id + "/tmp/count");
        try {
            return Files.readString(file).strip(); // never empty: the loop renames each value into place
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    @EachRuntime
    void hibernateFreesTheProcessesAndResumeBringsThemBack(String runtime) {
        String id = calmSandbox(runtime);
        api.sh(id, COUNTER + " httpd -p 8080 -h /etc");
        Await.until("counting", Duration.ofSeconds(10), () -> count(id) > 3);
        var hibernated = api.post("/v1/sandboxes/" + id + "/hibernate", null);
        assertThat(hibernated.get("state").asText()).isEqualTo("hibernated");
        assertThat(hibernated.path("hibernation").path("imageBytes").asLong()).isPositive();
        assertThat(hibernated.path("hibernation").path("takenAt").asText()).isNotBlank();
        assertThat(HostLeaks.processesOf(Set.of(new SandboxId(id)))).as("no process while hibernated").isEmpty();
        long atDump = Long.parseLong(readCounterFile(id));
        assertThat(api.post("/v1/sandboxes/" + id + "/resume", null).get("state").asText()).isEqualTo("running");
        long after = Long.parseLong(readCounterFile(id));
        assertThat(after).isBetween(atDump, atDump + 40);
        assertThat(api.sh(id, "wget -q -O - http://127.0.0.1:8080/passwd | head -1")).startsWith("root:");
    }

    @Test
    void aPythonHttpServerAnswersAfterHibernationAndResume() {
        String id = create("{\"template\": \"base\", \"lifecycle\": {\"pauseAfterIdle\": null, \"hibernateAfterIdle\": null}}");
        api.sh(id, "mkdir -p /srv && echo served-by-python > /srv/index.html && cd /srv && (python3 -m http.server 8000 >/dev/null 2>&1 &)");
        Await.until("the server to listen", Duration.ofSeconds(20),
                () -> api.call("POST", "/v1/sandboxes/" + id + "/exec", "{\"cmd\": [\"curl\", \"-sf\", \"http://127.0.0.1:8000/\"]}").body().path("exitCode").asInt() == 0);
        assertThat(api.post("/v1/sandboxes/" + id + "/hibernate", null).get("state").asText()).isEqualTo("hibernated");
        assertThat(api.post("/v1/sandboxes/" + id + "/resume", null).get("state").asText()).isEqualTo("running");
        assertThat(api.sh(id, "curl -s http://127.0.0.1:8000/")).isEqualTo("served-by-python\n");
        assertThat(api.sh(id, "ps -eo args | grep -c '[h]ttp.server'").strip()).as("the same server, not a new one").isEqualTo("1");
    }

    @Test
    void theEventStreamReplaysFromLastEventIdAndGoesOnLive() throws Exception {
        String id = calmSandbox();
        try (var http = HttpClient.newHttpClient()) {
            var request = HttpRequest.newBuilder(URI.create(service.url + "/v1/sandboxes/" + id + "/events"))
                    .header("Authorization", "Bearer " + service.rootKey).header("Accept", "text/event-stream").header("Last-Event-ID", "0").build();
            var response = http.send(request, HttpResponse.BodyHandlers.ofInputStream());
            var seen = new LinkedBlockingQueue<String>();
            Thread.ofVirtual().start(() -> {
                try (var reader = new BufferedReader(new InputStreamReader(response.body()))) {
                    String line, event = null;
                    while ((line = reader.readLine()) != null) {
                        if (line.startsWith("event: ")) event = line.substring(7);
                        else if (line.startsWith("data: ") && "lifecycle".equals(event)) seen.add(line.substring(6));
                    }
                } catch (IOException e) {
                    // the test closed the stream
                }
            });
            assertThat(seen.poll(10, TimeUnit.SECONDS)).as("the replayed creation").contains("\"to\":\"running\"");
            api.post("/v1/sandboxes/" + id + "/pause", null);
            assertThat(seen.poll(10, TimeUnit.SECONDS)).as("the live pause").contains("\"to\":\"paused\"").contains("\"reason\":\"api\"");
            response.body().close();
        }
    }

    @EachRuntime
    void anAgeLimitThatSleepsPutsTheSandboxInStandbyAndEachWakeGivesItWakeForMore(String runtime) {
        String id = create(runtime, "{\"lifecycle\": {\"pauseAfterIdle\": null, \"standbyAfterIdle\": null, \"hibernateAfterIdle\": null,"
                + " \"maxAge\": \"2s\", \"atMaxAge\": \"standby\", \"wakeFor\": \"3s\"}}");
        api.sh(id, COUNTER);
        Await.until("standby at its age limit, busy or not", Duration.ofSeconds(15), () -> state(id).equals("standby"));
        long before = count(id); // an exec: it wakes the sandbox
        var woken = api.get("/v1/sandboxes/" + id);
        assertThat(woken.get("state").asText()).isEqualTo("running");
        Duration age = Duration.between(Instant.parse(woken.get("createdAt").asText()), Instant.now());
        Duration maxAge = Durations.parse("maxAge", woken.path("lifecycle").path("maxAge").asText());
        assertThat(maxAge).as("its age when woken plus wakeFor").isGreaterThan(age).isLessThanOrEqualTo(age.plusSeconds(3));
        assertThat(woken.path("lifecycle").path("atMaxAge").asText()).isEqualTo("standby");
        Await.until("its processes go on", Duration.ofSeconds(10), () -> count(id) > before + 3);
        Await.until("standby again wakeFor later", Duration.ofSeconds(15), () -> state(id).equals("standby"));
        api.call("PATCH", "/v1/sandboxes/" + id + "/lifecycle", "{\"atMaxAge\": \"delete\"}");
        Await.until("deleted once the age limit deletes", Duration.ofSeconds(15),
                () -> api.call("GET", "/v1/sandboxes/" + id, null).status() == 404);
        var refused = api.call("PATCH", "/v1/sandboxes/" + calmSandbox() + "/lifecycle", "{\"atMaxAge\": \"nap\"}");
        assertThat(refused.status()).isEqualTo(422);
        assertThat(refused.body().path("error").path("message").asText()).contains("lifecycle.atMaxAge");
    }

    @EachRuntime
    void anyCallWakesASleepingSandbox(String runtime) {
        String id = calmSandbox(runtime);
        api.sh(id, "echo kept > /root/f");
        api.post("/v1/sandboxes/" + id + "/pause", null);
        assertThat(api.sh(id, "cat /root/f")).isEqualTo("kept\n");
        assertThat(state(id)).isEqualTo("running");
        api.post("/v1/sandboxes/" + id + "/hibernate", null);
        assertThat(api.call("GET", "/v1/sandboxes/" + id + "/files/stat?path=/root/f", null).status()).isEqualTo(200);
        assertThat(state(id)).isEqualTo("running");
        api.post("/v1/sandboxes/" + id + "/hibernate", null);
        assertThat(api.sh(id, "cat /root/f")).isEqualTo("kept\n");

        api.call("PATCH", "/v1/sandboxes/" + id + "/lifecycle", "{\"autoResume\": false}").ok();
        api.post("/v1/sandboxes/" + id + "/pause", null);
        var refused = api.call("POST", "/v1/sandboxes/" + id + "/exec", "{\"cmd\": [\"true\"]}");
        assertThat(refused.status()).isEqualTo(409);
        assertThat(refused.errorCode()).isEqualTo("invalid_state");
        assertThat(state(id)).as("metadata reads do not wake it").isEqualTo("paused");
    }

    @EachRuntime
    void stopEndsProcessesKeepsFilesAndStartBoots(String runtime) {
        String id = calmSandbox(runtime);
        api.sh(id, COUNTER + " echo kept > /root/f");
        assertThat(api.post("/v1/sandboxes/" + id + "/stop", null).get("state").asText()).isEqualTo("stopped");
        var refused = api.call("POST", "/v1/sandboxes/" + id + "/exec", "{\"cmd\": [\"true\"]}");
        assertThat(refused.status()).isEqualTo(409);
        assertThat(api.call("GET", "/v1/sandboxes/" + id + "/files?path=/root/f", null).status()).isEqualTo(200);
        assertThat(api.post("/v1/sandboxes/" + id + "/start", null).get("state").asText()).isEqualTo("running");
        assertThat(api.sh(id, "cat /root/f; ps -o args | grep -c '[w]hile true' || true")).isEqualTo("kept\n0\n");
    }

    @EachRuntime
    void checkpointsAndForksDiverge(String runtime) {
        String parent = calmSandbox(runtime);
        api.sh(parent, COUNTER + " echo before > /root/shared");
        Await.until("counting", Duration.ofSeconds(10), () -> count(parent) > 3);
        var memory = api.post("/v1/sandboxes/" + parent + "/checkpoints", "{\"name\": \"with-memory\", \"memory\": true}");
        assertThat(memory.get("id").asText()).startsWith("ckpt_");
        assertThat(memory.get("sizeBytes").asLong()).isPositive();
        var files = api.post("/v1/sandboxes/" + parent + "/checkpoints", "{\"memory\": false}");
        assertThat(files.get("sizeBytes").asLong()).isZero();
        assertThat(api.get("/v1/sandboxes/" + parent + "/checkpoints").get("items")).hasSize(2);
        assertThat(state(parent)).isEqualTo("running");

        var forks = api.post("/v1/sandboxes/" + parent + "/fork", "{\"checkpoint\": \"" + memory.get("id").asText() + "\", \"count\": 3}").get("items");
        assertThat(forks).hasSize(3);
        var ids = new ArrayList<String>();
        for (JsonNode fork : forks) {
            ids.add(fork.get("id").asText());
            assertThat(fork.get("parentId").asText()).isEqualTo(parent);
            assertThat(fork.get("checkpointId").asText()).isEqualTo(memory.get("id").asText());
        }
        for (String fork : ids) {
            assertThat(api.sh(fork, "cat /root/shared")).isEqualTo("before\n");
            long c = count(fork);
            Await.until("the fork's own counter", Duration.ofSeconds(10), () -> count(fork) > c);
            assertThat(api.sh(fork, "hostname").strip()).isEqualTo(new SandboxId(fork).hostname());
        }
        api.sh(ids.getFirst(), "echo mine > /root/only-first");
        assertThat(api.call("GET", "/v1/sandboxes/" + ids.get(1) + "/files/stat?path=/root/only-first", null).status()).isEqualTo(404);
        assertThat(api.call("GET", "/v1/sandboxes/" + parent + "/files/stat?path=/root/only-first", null).status()).isEqualTo(404);
        assertThat(api.get("/v1/sandboxes/" + parent + "/forks").get("items")).hasSize(3);

        var cold = api.post("/v1/sandboxes/" + parent + "/fork", "{\"checkpoint\": \"" + files.get("id").asText() + "\"}").get("items").get(0);
        String coldId = cold.get("id").asText();
        assertThat(api.sh(coldId, "cat /root/shared; ps -o args | grep -c '[w]hile true' || true")).isEqualTo("before\n0\n");

        var current = api.post("/v1/sandboxes/" + parent + "/fork", "{\"name\": \"now-" + runtime + "\"}").get("items").get(0);
        assertThat(current.get("name").asText()).isEqualTo("now-" + runtime);
        Await.until("the current-state fork counts", Duration.ofSeconds(10), () -> count("now-" + runtime) > 3);

        assertThat(api.call("DELETE", "/v1/checkpoints/" + files.get("id").asText(), null).status()).isEqualTo(204);
        assertThat(api.call("POST", "/v1/sandboxes/" + parent + "/fork", "{\"checkpoint\": \"" + files.get("id").asText() + "\"}").errorCode())
                .isEqualTo("checkpoint_not_found");
        assertThat(api.sh(coldId, "cat /root/shared")).as("a fork outlives its checkpoint").isEqualTo("before\n");
    }

    /**
     * Forks of a files checkpoint are warm sandboxes given the checkpoint's root (the pool holds 2
     * per template here; a third fork starts a container of its own): each runs on the checkpoint's
     * files with its parent's limits and policy, apart from the parent and the other forks, and
     * lives on like any sandbox.
     */
    @Test
    void forksOfAFilesCheckpointRunOnItsFilesWithTheParentsLimitsAndPolicy() throws Exception {
        String parent = create("{\"lifecycle\": {\"pauseAfterIdle\": null, \"hibernateAfterIdle\": null},"
                + " \"resources\": {\"memoryMb\": 256, \"pids\": 128},"
                + " \"network\": {\"egress\": {\"default\": \"deny\", \"allow\": [\"example.com\"]}}}");
        api.sh(parent, "echo at-checkpoint > /root/shared");
        String checkpoint = api.post("/v1/sandboxes/" + parent + "/checkpoints", "{\"memory\": false}").get("id").asText();
        api.sh(parent, "echo after-checkpoint > /root/shared");

        var forks = api.post("/v1/sandboxes/" + parent + "/fork", "{\"checkpoint\": \"" + checkpoint + "\", \"count\": 3}").get("items");
        var ids = new ArrayList<String>();
        forks.forEach(f -> ids.add(f.get("id").asText()));
        var addresses = new HashSet<String>();
        for (String fork : ids) {
            assertThat(api.sh(fork, "cat /root/shared; hostname")).isEqualTo("at-checkpoint\n" + new SandboxId(fork).hostname() + "\n");
            assertThat(api.sh(fork, "cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/pids/pids.max"))
                    .as("the parent's limits").isEqualTo((256L << 20) + "\n128\n");
            var network = api.get("/v1/sandboxes/" + fork + "/network");
            assertThat(network.get("egress").get("allow").toString()).isEqualTo("[\"example.com\"]");
            addresses.add(network.get("address").asText());
            assertThat(api.get("/v1/sandboxes/" + fork).get("resources").get("memoryMb").asInt()).isEqualTo(256);
            api.sh(fork, "echo " + fork + " > /root/mine");
            // Background processes keep their output where the host reads it: in the fork's own root.
            var started = api.post("/v1/sandboxes/" + fork + "/processes", "{\"cmd\": [\"sh\", \"-c\", \"echo from-$(hostname)\"]}");
            long pid = started.get("pid").asLong();
            api.get("/v1/sandboxes/" + fork + "/processes/" + pid + "/wait?timeoutMs=10000");
            assertThat(api.get("/v1/sandboxes/" + fork + "/processes/" + pid + "/output").get("stdout").asText())
                    .isEqualTo("from-" + new SandboxId(fork).hostname() + "\n");
        }
        assertThat(addresses).as("each fork has an address of its own").hasSize(3);
        for (String fork : ids) assertThat(api.sh(fork, "cat /root/mine")).isEqualTo(fork + "\n");
        assertThat(api.sh(parent, "cat /root/shared; test -e /root/mine || echo none")).isEqualTo("after-checkpoint\nnone\n");

        String first = ids.getFirst();
        api.sh(first, COUNTER);
        Await.until("the fork counts", Duration.ofSeconds(10), () -> count(first) > 3);
        assertThat(api.post("/v1/sandboxes/" + first + "/hibernate", null).get("state").asText()).isEqualTo("hibernated");
        long atHibernate = count(first); // wakes it
        Await.until("the fork counts on after hibernation", Duration.ofSeconds(10), () -> count(first) > atHibernate);
        assertThat(api.sh(first, "cat /root/shared /root/mine")).isEqualTo("at-checkpoint\n" + first + "\n");

        for (String fork : ids) assertThat(api.call("DELETE", "/v1/sandboxes/" + fork, null).status()).isEqualTo(204);
        try (var roots = Files.list(service.dataDir.resolve("btrfs/roots"))) {
            assertThat(roots.map(p -> p.getFileName().toString())).as("no old root is left aside").noneMatch(n -> n.endsWith(".replaced"));
        }
    }

    @Test
    void tenForksAtOnce() {
        String parent = calmSandbox();
        api.sh(parent, COUNTER);
        var forks = api.post("/v1/sandboxes/" + parent + "/fork", "{\"count\": 10}").get("items");
        assertThat(forks).hasSize(10);
        var ids = new HashSet<SandboxId>();
        forks.forEach(f -> ids.add(new SandboxId(f.get("id").asText())));
        for (var id : ids) Await.until("fork " + id + " counts", Duration.ofSeconds(20), () -> count(id.value()) > 0);
        assertThat(HostLeaks.processesOf(ids)).hasSizeGreaterThanOrEqualTo(20);
    }

    @Test
    void everyChangeOfLiveStateIsANewGenerationAndAResumeCanRefuseAnOlderOne() {
        String id = calmSandbox();
        String path = "/v1/sandboxes/" + id;
        assertThat(api.get(path).get("generation").asLong()).as("made").isEqualTo(1);
        assertThat(api.post(path + "/pause", null).get("generation").asLong()).isEqualTo(2);
        assertThat(api.post(path + "/pause", null).get("generation").asLong()).as("already paused: unchanged").isEqualTo(2);
        assertThat(api.post(path + "/standby", null).get("generation").asLong()).isEqualTo(3);

        var older = api.call("POST", path + "/resume", "{\"expectGeneration\": 4}");
        assertThat(older.status()).isEqualTo(409);
        assertThat(older.errorCode()).isEqualTo("generation_mismatch");
        assertThat(older.body().path("error").path("details").path("actual").asLong()).isEqualTo(3);
        assertThat(older.body().path("error").path("details").path("expected").asLong()).isEqualTo(4);
        assertThat(state(id)).as("nothing changed").isEqualTo("standby");
        assertThat(api.call("POST", path + "/resume", "{\"expectGeneration\": \"3\"}").errorCode()).isEqualTo("invalid_request");
        assertThat(api.call("POST", path + "/resume", "{\"expectGeneration\": 0}").errorCode()).isEqualTo("invalid_request");
        assertThat(api.call("POST", path + "/resume", "{\"expect\": 3}").errorCode()).isEqualTo("invalid_request");

        var resumed = api.call("POST", path + "/resume", "{\"expectGeneration\": 3}").ok();
        assertThat(resumed.get("state").asText()).isEqualTo("running");
        assertThat(resumed.get("generation").asLong()).isEqualTo(4);
        assertThat(api.call("POST", path + "/resume", "{\"expectGeneration\": 2}").ok().get("generation").asLong())
                .as("a newer generation than expected resumes; already running: unchanged").isEqualTo(4);
        api.post(path + "/checkpoints", "{\"memory\": false}");
        assertThat(api.get(path).get("generation").asLong()).as("a checkpoint").isEqualTo(5);
        api.post(path + "/hibernate", null);
        assertThat(api.post(path + "/resume", null).get("generation").asLong()).isEqualTo(7);
        var fork = api.post(path + "/fork", "{\"count\": 1}").get("items").get(0);
        assertThat(fork.get("generation").asLong()).as("a fork starts its own count").isEqualTo(1);
        assertThat(api.get(path).get("generation").asLong()).as("the fork's checkpoint of the parent").isEqualTo(8);
    }

    @Test
    void badRequestsGetClearErrors() {
        String id = calmSandbox();
        assertThat(api.call("POST", "/v1/sandboxes/" + id + "/checkpoints", "{}").errorCode()).isEqualTo("invalid_request");
        assertThat(api.call("POST", "/v1/sandboxes/" + id + "/fork", "{\"count\": 101}").errorCode()).isEqualTo("invalid_request");
        assertThat(api.call("POST", "/v1/sandboxes/" + id + "/fork", "{\"checkpoint\": \"ckpt_0000000000000000\"}").errorCode())
                .isEqualTo("checkpoint_not_found");
        assertThat(api.call("PATCH", "/v1/sandboxes/" + id + "/lifecycle", "{\"pauseAfterIdle\": \"soon\"}").errorCode()).isEqualTo("invalid_request");
        assertThat(api.call("PATCH", "/v1/sandboxes/" + id + "/lifecycle", "{\"pauseAfter\": \"1s\"}").errorCode()).isEqualTo("invalid_request");
        assertThat(api.call("DELETE", "/v1/checkpoints/nope", null).status()).isEqualTo(404);
        api.post("/v1/sandboxes/" + id + "/stop", null);
        assertThat(api.call("POST", "/v1/sandboxes/" + id + "/hibernate", null).errorCode()).isEqualTo("invalid_state");
        assertThat(api.call("POST", "/v1/sandboxes/" + id + "/checkpoints", "{\"memory\": true}").errorCode()).isEqualTo("invalid_state");
    }

    @EachRuntime
    void theIdlePolicyMovesAnIdleSandboxDownTheLadderButNotABusyOne(String runtime) {
        // Hibernation 5 s after the pause: a monitor that first sees the sandbox idle past both (under load, a gVisor
        // sandbox's CPU reading came 3 s late in CI) rightly takes it straight down, and the ladder would not show.
        String idle = create(runtime, "{\"lifecycle\": {\"pauseAfterIdle\": \"1s\", \"hibernateAfterIdle\": \"6s\"}}");
        String busy = create(runtime, "{\"lifecycle\": {\"pauseAfterIdle\": \"1s\", \"hibernateAfterIdle\": \"6s\"}}");
        api.sh(busy, "(while true; do :; done) >/dev/null 2>&1 &");
        Await.until("the idle sandbox to pause", Duration.ofSeconds(15), () -> state(idle).equals("paused"));
        Await.until("the idle sandbox to hibernate", Duration.ofSeconds(25), () -> state(idle).equals("hibernated"));
        assertThat(state(busy)).as("a CPU-busy sandbox is not idle").isEqualTo("running");
        var reasons = new ArrayList<String>();
        api.get("/v1/sandboxes/" + idle + "/events").get("items").forEach(e -> {
            if (e.get("type").asText().equals("lifecycle")) reasons.add(e.path("data").path("to").asText() + ":" + e.path("data").path("reason").asText());
        });
        assertThat(reasons).contains("paused:idle", "hibernated:idle");
        // Deleted, not left spinning for the rest of the class: a core each.
        for (String done : List.of(idle, busy)) api.call("DELETE", "/v1/sandboxes/" + done, null).ok();
    }

    @EachRuntime
    void aLongExecKeepsItsSandboxAwake(String runtime) {
        String id = create(runtime, "{\"lifecycle\": {\"pauseAfterIdle\": \"1s\"}}");
        var result = api.post("/v1/sandboxes/" + id + "/exec", "{\"cmd\": [\"sleep\", \"3\"]}");
        assertThat(result.get("exitCode").asInt()).isZero();
        Await.until("the sandbox to pause once idle", Duration.ofSeconds(10), () -> state(id).equals("paused"));
    }
}
