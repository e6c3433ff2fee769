package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.stasis.testkit.Await;
import io.stasis.testkit.CounterLoop;
import io.stasis.testkit.HostLeaks;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The service dies (as with SIGKILL) at every named step of every multi-step operation; started
 * again, it finds each sandbox in its old or its new state, usable, with no file lost and no
 * half-made checkpoint left.
 */
@Tag("root")
class CrashRecoveryIT {
    private static final String COUNTER = CounterLoop.SCRIPT;
    private static final String CALM = "{\"lifecycle\": {\"pauseAfterIdle\": null, \"hibernateAfterIdle\": null}}";
    private static Path dataDir;
    private static Path log;

    /**
     * @param step    the fault point the service dies at
     * @param from    the state the sandbox is brought to first
     * @param action  the call that reaches the step
     * @param allowed the states the sandbox may be found in afterwards ("gone" for deleted)
     * @param runtime the sandbox's runtime
     */
    record Case(String step, String from, String action, Set<String> allowed, int warmPool, String runtime) {
        Case(String step, String from, String action, Set<String> allowed) {
            this(step, from, action, allowed, 0, "runc");
        }

        Case(String step, String from, String action, Set<String> allowed, int warmPool) {
            this(step, from, action, allowed, warmPool, "runc");
        }

        Case underGvisor() {
            return new Case(step, from, action, allowed, warmPool, "gvisor");
        }

        @Override
        public String toString() {
            return step + " from " + from + (runtime.equals("runc") ? "" : " (" + runtime + ")");
        }
    }

    static List<Case> cases() {
        return List.of(
                new Case("pause.after-freeze", "running", "pause", Set.of("running", "paused")),
                new Case("resume.after-thaw", "paused", "resume", Set.of("running", "paused")),
                new Case("standby.after-freeze", "running", "standby", Set.of("running", "standby")),
                new Case("standby.after-freeze", "paused", "standby", Set.of("paused", "standby")),
                new Case("resume.after-thaw", "standby", "resume", Set.of("running", "standby")),
                new Case("hibernate.after-record", "standby", "hibernate", Set.of("standby", "hibernated")),
                new Case("hibernate.after-freeze", "running", "hibernate", Set.of("running", "hibernated")),
                new Case("hibernate.after-snapshot", "running", "hibernate", Set.of("running", "hibernated")),
                new Case("hibernate.after-dump", "running", "hibernate", Set.of("running", "hibernated")),
                new Case("hibernate.after-record", "paused", "hibernate", Set.of("paused", "hibernated")),
                new Case("resume.after-restore", "hibernated", "resume", Set.of("hibernated", "running")),
                new Case("resume.after-commit", "hibernated", "resume", Set.of("hibernated", "running")),
                new Case("checkpoint.after-freeze", "running", "checkpoint", Set.of("running")),
                new Case("checkpoint.after-snapshot", "running", "checkpoint", Set.of("running")),
                new Case("checkpoint.after-dump", "running", "checkpoint", Set.of("running")),
                new Case("checkpoint.after-record", "running", "checkpoint", Set.of("running")),
                new Case("stop.after-stop", "running", "stop", Set.of("running", "stopped")),
                new Case("start.after-create", "stopped", "start", Set.of("stopped", "running")),
                new Case("fork.after-start", "running", "fork", Set.of("running")),
                // A fork of a files checkpoint into a warm sandbox, between its new root and the old one's removal.
                new Case("fork.after-reroot", "running", "fork-files", Set.of("running"), 2),
                new Case("delete.after-mark", "running", "delete", Set.of("gone")),
                new Case("delete.after-destroy", "running", "delete", Set.of("gone")),
                // Where gVisor's engine does the work its own way: its standby, save, restore and copies.
                new Case("standby.after-freeze", "running", "standby", Set.of("running", "standby")).underGvisor(),
                new Case("hibernate.after-dump", "running", "hibernate", Set.of("running", "hibernated")).underGvisor(),
                new Case("resume.after-restore", "hibernated", "resume", Set.of("hibernated", "running")).underGvisor(),
                new Case("checkpoint.after-dump", "running", "checkpoint", Set.of("running")).underGvisor(),
                // After the save, runsc holding the tasks for the root's snapshot and init off its socket.
                new Case("checkpoint.after-snapshot", "running", "checkpoint", Set.of("running")).underGvisor(),
                new Case("fork.after-start", "running", "fork", Set.of("running")).underGvisor());
    }

    @BeforeAll
    static void createDataDir() throws IOException {
        dataDir = Files.createTempDirectory("stasis-crash-it", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx--x--x")));
        log = Path.of("target", "crash-recovery-it-service.log").toAbsolutePath();
    }

    @AfterAll
    static void removeDataDir() throws Exception {
        // A last clean start: it reconciles, and its orderly stop unmounts the pool.
        try (var last = ServiceProcess.start(dataDir, log); var api = api(last)) {
            // Whatever a failed case left is deleted here, so that the pool can be unmounted.
            for (JsonNode sandbox : api.get("/v1/sandboxes").get("items"))
                api.call("DELETE", "/v1/sandboxes/" + sandbox.get("id").asText(), null);
        }
        assertThat(HostLeaks.mountsUnder(dataDir)).isEmpty();
        assertThat(HostLeaks.swapFilesUnder(dataDir)).isEmpty();
        assertThat(HostLeaks.loopDevicesBackedBy(dataDir, Duration.ofSeconds(15))).isEmpty();
        ServiceFixture.deleteTree(dataDir);
    }

    private static RawApi api(ServiceProcess service) throws IOException {
        return new RawApi(service.url, Files.readString(dataDir.resolve("root.key")).strip());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void aCrashAtEveryStepLeavesAWellDefinedUsableSandbox(Case c) throws Exception {
        String id;
        long generationBefore;
        try (var armed = ServiceProcess.start(dataDir, log, Map.of("STASIS_FAULT_POINT", c.step()), "--warm-pool",
                Integer.toString(c.warmPool()), "--no-warm-up")) {
            try (var api = api(armed)) {
                id = api.post("/v1/sandboxes", ServiceFixture.inRuntime(c.runtime(), CALM)).get("id").asText();
                api.sh(id, COUNTER + " echo precious > /root/precious");
                Await.until("counting", Duration.ofSeconds(10), () -> !api.sh(id, "cat /tmp/count 2>/dev/null; true").isBlank());
                api.bringTo(id, c.from());
                generationBefore = api.get("/v1/sandboxes/" + id).get("generation").asLong();
                var response = call(api, id, c.action());
                assertThat(armed.awaitDeath(Duration.ofSeconds(60)))
                        .as("the service should have died at %s (the call answered %s)", c, response).isTrue();
            }
        }
        try (var again = ServiceProcess.start(dataDir, log, Map.of(), "--warm-pool", "0", "--no-warm-up"); var api = api(again)) {
            var found = api.call("GET", "/v1/sandboxes/" + id, null);
            String state = found.status() == 404 ? "gone" : found.ok().get("state").asText();
            assertThat(state).as("state after a crash at %s", c).isIn(c.allowed());
            assertNoStrayCheckpoints(api);
            if (!state.equals("gone")) {
                long generation = found.ok().get("generation").asLong();
                boolean checkpointKept = !api.get("/v1/sandboxes/" + id + "/checkpoints").get("items").isEmpty();
                if (!state.equals(c.from()) || checkpointKept)
                    assertThat(generation).as("the new state (or checkpoint) after a crash at %s is a new generation", c)
                            .isGreaterThan(generationBefore);
                else assertThat(generation).as("the old state after a crash at %s is the old generation", c).isEqualTo(generationBefore);
                // Its files are all there (the files API reads a stopped sandbox too; it wakes a sleeping one).
                assertThat(api.call("GET", "/v1/sandboxes/" + id + "/files?path=/root/precious", null).body().asText()).isEqualTo("precious\n");
                // Usable: processes that were kept go on (a stopped or freshly started sandbox has none).
                boolean processesKept = !state.equals("stopped") && !c.from().equals("stopped");
                if (state.equals("stopped")) api.post("/v1/sandboxes/" + id + "/start", null);
                assertThat(api.sh(id, "echo alive")).isEqualTo("alive\n");
                if (processesKept) {
                    long now = Long.parseLong(api.sh(id, "cat /tmp/count").strip());
                    Await.until("the counter to go on", Duration.ofSeconds(10), () -> {
                        String text = api.sh(id, "cat /tmp/count").strip();
                        return !text.isEmpty() && Long.parseLong(text) > now;
                    });
                }
                for (JsonNode fork : api.get("/v1/sandboxes/" + id + "/forks").get("items"))
                    api.call("DELETE", "/v1/sandboxes/" + fork.get("id").asText(), null);
                assertThat(api.call("DELETE", "/v1/sandboxes/" + id, null).status()).isEqualTo(204);
            }
            assertThat(api.get("/v1/sandboxes").get("items")).as("no half-made sandbox is listed").isEmpty();
        }
    }

    /** The call that reaches the fault point; the service dies while answering it. */
    private static String call(RawApi api, String id, String action) {
        try {
            var response = switch (action) {
                case "checkpoint" -> api.call("POST", "/v1/sandboxes/" + id + "/checkpoints", "{\"memory\": true}");
                case "fork" -> api.call("POST", "/v1/sandboxes/" + id + "/fork", "{}");
                case "fork-files" -> {
                    String checkpoint = api.post("/v1/sandboxes/" + id + "/checkpoints", "{\"memory\": false}").get("id").asText();
                    yield api.call("POST", "/v1/sandboxes/" + id + "/fork", "{\"checkpoint\": \"" + checkpoint + "\"}");
                }
                case "delete" -> api.call("DELETE", "/v1/sandboxes/" + id, null);
                default -> api.call("POST", "/v1/sandboxes/" + id + "/" + action, null);
            };
            return response.status() + " " + response.body();
        } catch (UncheckedIOException e) {
            return "connection lost";
        }
    }

    /** Every image and root snapshot on disk (and its lineage file) belongs to a checkpoint the catalog knows, and the other way round. */
    private static void assertNoStrayCheckpoints(RawApi api) throws IOException {
        var known = new HashSet<String>();
        for (JsonNode sandbox : api.get("/v1/sandboxes").get("items")) {
            for (JsonNode checkpoint : api.get("/v1/sandboxes/" + sandbox.get("id").asText() + "/checkpoints").get("items"))
                known.add(checkpoint.get("id").asText());
            if (sandbox.hasNonNull("hibernation")) known.add(sandbox.get("hibernation").get("checkpointId").asText());
        }
        assertThat(names(dataDir.resolve("runtime/images"))).as("CRIU images").isSubsetOf(known);
        assertThat(names(dataDir.resolve("btrfs/checkpoints"))).as("root snapshots").isSubsetOf(known);
        var sandboxes = new HashSet<String>();
        for (JsonNode sandbox : api.get("/v1/sandboxes").get("items")) sandboxes.add(sandbox.get("id").asText());
        assertThat(names(dataDir.resolve("btrfs/roots"), "sbx_")).as("roots (old ones put aside included)").isSubsetOf(sandboxes);
    }

    private static Set<String> names(Path dir) throws IOException {
        return names(dir, "ckpt_");
    }

    private static Set<String> names(Path dir, String prefix) throws IOException {
        if (!Files.isDirectory(dir)) return Set.of();
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(prefix))
                    .map(n -> n.endsWith(".lineage") ? n.substring(0, n.length() - ".lineage".length()) : n).collect(Collectors.toSet());
        }
    }
}
