package io.stasis.cli;

import static io.stasis.cli.FakeServer.error;
import static io.stasis.cli.FakeServer.respond;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** pause, resume, hibernate, stop, start, lifecycle, checkpoint(s), rm-checkpoint, fork, events and the new info rows. */
class LiveStateCommandsTest {
    static final String LIFECYCLE = """
            {"pauseAfterIdle": "15s", "standbyAfterIdle": "2m", "hibernateAfterIdle": "10m", "stopAfterIdle": null,
             "deleteAfterIdle": "30d", "maxAge": null, "autoResume": true}""";

    private FakeServer server;
    private Map<String, String> env;
    private String out;
    private String err;

    @BeforeEach
    void start() throws IOException {
        server = new FakeServer();
        env = Map.of("STASIS_URL", server.url(), "STASIS_API_KEY", "sk_env");
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private int run(String... args) {
        var outBuffer = new ByteArrayOutputStream();
        var errBuffer = new ByteArrayOutputStream();
        int code = Main.run(args, new PrintStream(outBuffer, true, StandardCharsets.UTF_8),
                new PrintStream(errBuffer, true, StandardCharsets.UTF_8), InputStream.nullInputStream(), env);
        out = outBuffer.toString(StandardCharsets.UTF_8);
        err = errBuffer.toString(StandardCharsets.UTF_8);
        return code;
    }

    /** A sandbox in the documented shape, with the live-state fields. */
    static String sandbox(String id, String state, String extra) {
        return """
                {"id": "%s", "name": "demo", "template": "tiny", "state": "%s", "stateReason": null, "hibernation": null,
                 "createdAt": "2026-11-29T10:00:00Z", "resources": {"cpus": 0.5, "memoryMb": 256, "pids": 128, "diskMb": 2048},
                 "env": {}, "metadata": {}, "parentId": null, "checkpointId": null, "lifecycle": %s}"""
                .formatted(id, state, LIFECYCLE).replace("\"hibernation\": null", extra == null ? "\"hibernation\": null" : extra);
    }

    static String checkpoint(String id, String name, boolean memory, String purpose, long size) {
        return """
                {"id": "%s", "sandboxId": "sbx_1", "name": %s, "memory": %b, "purpose": "%s", "sizeBytes": %d,
                 "createdAt": "2026-11-29T10:00:00.123Z"}""".formatted(id, name == null ? "null" : "\"" + name + "\"",
                memory, purpose, size);
    }

    // ---- state changes

    @ParameterizedTest
    @CsvSource({"pause, paused", "resume, running", "hibernate, hibernated", "stop, stopped", "start, running"})
    void eachStateVerbPrintsTheNewState(String verb, String state) {
        server.json("POST /v1/sandboxes/demo/" + verb, 200, sandbox("sbx_1", state, null));
        assertThat(run(verb, "demo")).isZero();
        assertThat(out).isEqualTo(state + "\n");
        assertThat(server.requests.getLast().body()).isEmpty();

        assertThat(run("--json", verb, "demo")).isZero();
        assertThat(out).contains("\"id\" : \"sbx_1\"", "\"state\" : \"" + state + "\"", "\"pauseAfterIdle\" : \"15s\"");
    }

    @Test
    void aStateVerbInTheWrongStateExitsWithTheConflictCode() {
        server.json("POST /v1/sandboxes/demo/pause", 409, error("invalid_state", "sandbox demo is stopped"));
        assertThat(run("pause", "demo")).isEqualTo(ExitCodes.CONFLICT);
        assertThat(err).isEqualTo("error: invalid_state: sandbox demo is stopped\n");
        assertThat(run("pause")).isEqualTo(2);
        assertThat(err).contains("Missing required parameter: 'ID'");
    }

    // ---- info and list

    @Test
    void infoShowsHibernationParentCheckpointAndPolicy() {
        server.json("GET /v1/sandboxes/try-1", 200, sandbox("sbx_2", "hibernated",
                "\"hibernation\": {\"checkpointId\": \"ckpt_h\", \"imageBytes\": 4404019, \"takenAt\": \"2026-11-29T10:05:00.5Z\"}")
                .replace("\"parentId\": null", "\"parentId\": \"sbx_1\"")
                .replace("\"checkpointId\": null", "\"checkpointId\": \"ckpt_f\"")
                .replace("\"lifecycle\":", "\"generation\": 5, \"durableImage\": {\"checkpointId\": \"ckpt_d\", \"digest\": \"sha256:"
                        + "0".repeat(64) + "\", \"takenAt\": \"2026-11-29T10:04:00Z\"}, \"lifecycle\":"));
        assertThat(run("info", "try-1")).isZero();
        assertThat(out).isEqualTo("""
                ID           sbx_2
                NAME         demo
                TEMPLATE     tiny
                RUNTIME      runc
                STATE        hibernated (image 4.2 MiB, 2026-11-29T10:05:00Z)
                GENERATION   5
                DURABLE      ckpt_d sha256:0000000000000000000000000000000000000000000000000000000000000000 (2026-11-29T10:04:00Z)
                PARENT       sbx_1
                CHECKPOINT   ckpt_f
                CREATED      2026-11-29T10:00:00Z
                CPUS         0.5
                MEMORY       256 MiB
                PIDS         128
                DISK         2.0 GiB
                ENV          -
                METADATA     -
                LIFECYCLE    pauseAfterIdle=15s
                             standbyAfterIdle=2m
                             hibernateAfterIdle=10m
                             stopAfterIdle=never
                             deleteAfterIdle=30d
                             maxAge=never
                             autoResume=true
                """);
    }

    @Test
    void listFiltersByTheNewStates() {
        server.json("GET /v1/sandboxes", 200, "{\"items\": [" + sandbox("sbx_1", "paused", null) + "], \"nextCursor\": null}");
        assertThat(run("list", "--state", "paused")).isZero();
        assertThat(server.requests.getLast().params()).containsEntry("state", "paused");
        assertThat(out).contains("sbx_1   demo   tiny       paused");
    }

    // ---- lifecycle

    @Test
    void lifecycleWithoutOptionsShowsThePolicy() {
        server.json("GET /v1/sandboxes/demo", 200, sandbox("sbx_1", "running", null));
        assertThat(run("lifecycle", "demo")).isZero();
        assertThat(out).isEqualTo("""
                PAUSE AFTER IDLE       15s
                STANDBY AFTER IDLE     2m
                HIBERNATE AFTER IDLE   10m
                STOP AFTER IDLE        never
                DELETE AFTER IDLE      30d
                MAX AGE                never
                AUTO RESUME            true
                """);
        assertThat(server.requests).extracting(FakeServer.Request::method).containsExactly("GET");
    }

    @Test
    void lifecycleSendsOnlyTheGivenOptions() {
        server.json("PATCH /v1/sandboxes/demo/lifecycle", 200, sandbox("sbx_1", "running", null)
                .replace("\"pauseAfterIdle\": \"15s\"", "\"pauseAfterIdle\": \"1m\""));
        assertThat(run("lifecycle", "demo", "--pause-after", "60s", "--stop-after", "never", "--max-age", "7d",
                "--hibernate-after", "1.5s", "--delete-after", "NEVER", "--auto-resume", "false")).isZero();
        assertThat(server.requests.getLast().text()).isEqualTo("{\"pauseAfterIdle\":\"1m\",\"hibernateAfterIdle\":"
                + "\"1500ms\",\"stopAfterIdle\":null,\"deleteAfterIdle\":null,\"maxAge\":\"7d\",\"autoResume\":false}");
        assertThat(out).startsWith("PAUSE AFTER IDLE       1m\n");

        assertThat(run("lifecycle", "demo", "--auto-resume", "true", "--json")).isZero();
        assertThat(server.requests.getLast().text()).isEqualTo("{\"autoResume\":true}");
        assertThat(out).contains("\"lifecycle\" : {", "\"pauseAfterIdle\" : \"1m\"");

        server.json("PATCH /v1/sandboxes/demo/lifecycle", 200, sandbox("sbx_1", "running", null)
                .replace("\"maxAge\": null", "\"maxAge\": \"5m\", \"atMaxAge\": \"standby\", \"wakeFor\": \"5m\""));
        assertThat(run("lifecycle", "demo", "--max-age", "5m", "--at-max-age", "standby", "--wake-for", "5m")).isZero();
        assertThat(server.requests.getLast().text()).isEqualTo("{\"maxAge\":\"5m\",\"atMaxAge\":\"standby\",\"wakeFor\":\"5m\"}");
        assertThat(out).contains("MAX AGE                5m, then standby, wake for 5m\n");
    }

    @Test
    void lifecycleRefusesBadValuesBeforeCalling() {
        assertThat(run("lifecycle", "demo", "--pause-after", "soon")).isEqualTo(2);
        assertThat(err).contains("'soon' is not a duration");
        assertThat(run("lifecycle", "demo", "--auto-resume", "maybe")).isEqualTo(2);
        assertThat(run("lifecycle", "demo", "--auto-resume")).isEqualTo(2);
        assertThat(run("lifecycle", "demo", "--max-age", "1000000000d")).isEqualTo(2);
        assertThat(err).isEqualTo("error: --max-age: too long for the API (at most 9 digits per unit): PT24000000000H\n");
        assertThat(server.requests).isEmpty();
    }

    @Test
    void createTakesLifecycleOptions() {
        server.json("POST /v1/sandboxes", 201, sandbox("sbx_new", "running", null));
        assertThat(run("create", "--template", "tiny", "--hibernate-after", "2m", "--pause-after", "never")).isZero();
        assertThat(out).isEqualTo("sbx_new\n");
        assertThat(server.requests.getLast().text()).isEqualTo("{\"template\":\"tiny\","
                + "\"lifecycle\":{\"pauseAfterIdle\":null,\"hibernateAfterIdle\":\"2m\"}}");
        assertThat(run("create", "--checkpoint-every", "5m")).isZero();
        assertThat(server.requests.getLast().text()).isEqualTo("{\"durability\":{\"checkpointEvery\":\"5m\"}}");
    }

    // ---- checkpoints

    @Test
    void checkpointTakesMemoryByDefaultAndPrintsTheId() {
        server.json("POST /v1/sandboxes/demo/checkpoints", 201, checkpoint("ckpt_1", "ready", true, "user", 421033));
        assertThat(run("checkpoint", "demo")).isZero();
        assertThat(out).isEqualTo("ckpt_1\n");
        assertThat(server.requests.getLast().text()).isEqualTo("{\"memory\":true}");

        assertThat(run("checkpoint", "demo", "--name", "ready", "--no-memory")).isZero();
        assertThat(server.requests.getLast().text()).isEqualTo("{\"name\":\"ready\",\"memory\":false}");
        assertThat(run("checkpoint", "--memory", "demo")).isZero();
        assertThat(server.requests.getLast().text()).isEqualTo("{\"memory\":true}");
        assertThat(run("checkpoint", "demo", "--spares", "3")).isZero();
        assertThat(server.requests.getLast().text()).isEqualTo("{\"memory\":true,\"spares\":3}");

        assertThat(run("--json", "checkpoint", "demo")).isZero();
        assertThat(out).contains("\"id\" : \"ckpt_1\"", "\"purpose\" : \"user\"", "\"sizeBytes\" : 421033");
    }

    @Test
    void checkpointsListsATable() {
        server.json("GET /v1/sandboxes/demo/checkpoints", 200, "{\"items\": ["
                + checkpoint("ckpt_1", "before-tests", true, "user", 4404019) + ", "
                + checkpoint("ckpt_22", null, false, "user", 0) + ", "
                + checkpoint("ckpt_3", null, true, "fork", 900) + "], \"nextCursor\": null}");
        assertThat(run("checkpoints", "demo")).isZero();
        assertThat(out).isEqualTo("""
                ID        NAME           MEMORY   PURPOSE   SIZE      DURABLE   STORED   CREATED
                ckpt_1    before-tests   yes      user      4.2 MiB   no        -        2026-11-29T10:00:00Z
                ckpt_22   -              no       user      -         no        -        2026-11-29T10:00:00Z
                ckpt_3    -              yes      fork      900 B     no        -        2026-11-29T10:00:00Z
                """);
        assertThat(run("checkpoints", "demo", "--json")).isZero();
        assertThat(out).contains("\"items\"", "\"ckpt_22\"", "\"nextCursor\" : null");
    }

    @Test
    void checkpointDurableWaitsForTheBlobStore() {
        server.json("POST /v1/sandboxes/demo/checkpoints", 201, checkpoint("ckpt_1", "ready", true, "user", 421033));
        assertThat(run("checkpoint", "demo", "--durable")).isZero();
        assertThat(server.requests.getLast().text()).isEqualTo("{\"memory\":true,\"durable\":true}");
    }

    @Test
    void checkpointsWithoutAnIdListsTheTenantsWithTheirUploadState() {
        String durable = checkpoint("ckpt_1", "kept", true, "user", 1024).replace("}", ", \"durable\": true, \"upload\": \"durable\", "
                + "\"logicalBytes\": 5000000, \"storedBytes\": 2097152, \"uploadError\": null}");
        String pending = checkpoint("ckpt_2", null, false, "user", 0).replace("}", ", \"durable\": false, \"upload\": \"pending\", "
                + "\"logicalBytes\": null, \"storedBytes\": null, \"uploadError\": null}");
        server.json("GET /v1/checkpoints", 200, "{\"items\": [" + durable + ", " + pending + "], \"nextCursor\": null}");
        assertThat(run("checkpoints")).isZero();
        assertThat(out).isEqualTo("""
                ID       NAME   MEMORY   PURPOSE   SIZE      DURABLE   STORED    CREATED
                ckpt_1   kept   yes      user      1.0 KiB   yes       2.0 MiB   2026-11-29T10:00:00Z
                ckpt_2   -      no       user      -         pending   -         2026-11-29T10:00:00Z
                """);
    }

    @Test
    void checkpointsStoreListsTheBlobStore() {
        server.json("GET /v1/checkpoints", 200, "{\"items\": [], \"nextCursor\": null}");
        assertThat(run("checkpoints", "--store")).isZero();
        assertThat(server.requests.getLast().query()).isEqualTo("source=store");
        assertThat(run("checkpoints", "--store", "demo")).isEqualTo(2);
    }

    @Test
    void createFromACheckpointSendsOnlyItAndTheName() {
        server.json("POST /v1/sandboxes", 201, sandbox("sbx_new", "running", null));
        assertThat(run("create", "--from-checkpoint", "ckpt_1", "--name", "back")).isZero();
        assertThat(out).isEqualTo("sbx_new\n");
        assertThat(server.requests.getLast().text()).isEqualTo("{\"name\":\"back\",\"fromCheckpoint\":\"ckpt_1\"}");
    }

    @Test
    void rmCheckpointDeletesEachAndReportsFailures() {
        server.on("DELETE /v1/checkpoints/ckpt_1", (r, e) -> respond(e, 204, null, new byte[0]));
        server.json("DELETE /v1/checkpoints/ckpt_2", 404, error("checkpoint_not_found", "no checkpoint ckpt_2"));
        server.on("DELETE /v1/checkpoints/ckpt_3", (r, e) -> respond(e, 204, null, new byte[0]));
        assertThat(run("rm-checkpoint", "ckpt_1", "ckpt_2", "ckpt_3")).isEqualTo(ExitCodes.NOT_FOUND);
        assertThat(out).isEqualTo("ckpt_1\nckpt_3\n");
        assertThat(err).isEqualTo("error: checkpoint_not_found: no checkpoint ckpt_2\n");

        assertThat(run("--json", "rm-checkpoint", "ckpt_2")).isEqualTo(ExitCodes.NOT_FOUND);
        assertThat(out).contains("\"deleted\" : false", "\"code\" : \"checkpoint_not_found\"");
        assertThat(run("rm-checkpoint")).isEqualTo(2);
    }

    // ---- fork

    @Test
    void forkPrintsEveryNewId() {
        server.json("POST /v1/sandboxes/demo/fork", 201, "{\"items\": [" + sandbox("sbx_a", "running", null) + ", "
                + sandbox("sbx_b", "running", null) + "], \"nextCursor\": null}");
        assertThat(run("fork", "demo", "--checkpoint", "ckpt_1", "--count", "2", "--name", "try")).isZero();
        assertThat(out).isEqualTo("sbx_a\nsbx_b\n");
        assertThat(server.requests.getLast().text()).isEqualTo("{\"checkpoint\":\"ckpt_1\",\"count\":2,\"name\":\"try\"}");

        assertThat(run("fork", "demo")).isZero();
        assertThat(server.requests.getLast().text()).isEqualTo("{}");
        assertThat(run("fork", "demo", "--json")).isZero();
        assertThat(out).contains("\"items\"", "\"sbx_a\"", "\"sbx_b\"");
    }

    @Test
    void forkRefusesABadCountAndMapsAMissingCheckpoint() {
        assertThat(run("fork", "demo", "--count", "0")).isEqualTo(2);
        assertThat(err).isEqualTo("error: --count: count must be between 1 and 100, was 0\n");
        assertThat(server.requests).isEmpty();
        server.json("POST /v1/sandboxes/demo/fork", 404, error("checkpoint_not_found", "no checkpoint ckpt_x"));
        assertThat(run("fork", "demo", "--checkpoint", "ckpt_x")).isEqualTo(ExitCodes.NOT_FOUND);
        assertThat(err).isEqualTo("error: checkpoint_not_found: no checkpoint ckpt_x\n");
    }

    // ---- events

    static String event(long id, String type, String data) {
        return "{\"id\": %d, \"type\": \"%s\", \"at\": \"2026-11-29T10:00:%02d.250Z\", \"data\": %s}"
                .formatted(id, type, id, data);
    }

    static final String[] EVENTS = {
            event(1, "lifecycle", "{\"sandboxId\": \"sbx_1\", \"from\": \"none\", \"to\": \"running\", \"reason\": \"api\"}"),
            event(2, "checkpoint", "{\"sandboxId\": \"sbx_1\", \"checkpointId\": \"ckpt_1\", \"memory\": true, "
                    + "\"sizeBytes\": 4404019}"),
            event(3, "checkpoint", "{\"sandboxId\": \"sbx_1\", \"checkpointId\": \"ckpt_2\", \"memory\": false, "
                    + "\"sizeBytes\": 0}"),
            event(4, "fork", "{\"sandboxId\": \"sbx_1\", \"checkpointId\": \"ckpt_1\", \"children\": [\"sbx_a\", \"sbx_b\"]}"),
            event(5, "error", "{\"sandboxId\": \"sbx_a\", \"step\": \"restore\", \"message\": \"criu failed\"}"),
            event(6, "quota", "{\"sandboxId\": \"sbx_1\", \"limit\": 3}"),
    };

    /** Serves {@link #EVENTS} after {@code ?after=}, two per page. */
    private void serveEvents(String path) {
        server.on("GET " + path, (request, exchange) -> {
            int after = Integer.parseInt(request.params().getOrDefault("after", "0"));
            int end = Math.min(after + 2, EVENTS.length);
            var items = after >= EVENTS.length ? "" : String.join(", ", Arrays.copyOfRange(EVENTS, after, end));
            String next = end < EVENTS.length ? "\"" + end + "\"" : "null";
            respond(exchange, 200, "application/json",
                    ("{\"items\": [" + items + "], \"nextCursor\": " + next + "}").getBytes(StandardCharsets.UTF_8));
        });
    }

    @Test
    void eventsPrintsOneLinePerEventAcrossPages() {
        serveEvents("/v1/events");
        assertThat(run("events")).isZero();
        assertThat(out).isEqualTo("""
                1 2026-11-29T10:00:01Z lifecycle sbx_1 none -> running (api)
                2 2026-11-29T10:00:02Z checkpoint sbx_1 ckpt_1 memory 4.2 MiB
                3 2026-11-29T10:00:03Z checkpoint sbx_1 ckpt_2 files
                4 2026-11-29T10:00:04Z fork sbx_1 ckpt_1 -> sbx_a sbx_b
                5 2026-11-29T10:00:05Z error sbx_a restore: criu failed
                6 2026-11-29T10:00:06Z quota sbx_1 {"limit":3}
                """);
        assertThat(server.requests).extracting(r -> r.params().get("after")).containsExactly(null, "2", "4");
    }

    @Test
    void eventsOfOneSandboxAfterAnId() {
        serveEvents("/v1/sandboxes/demo/events");
        assertThat(run("events", "demo", "--after", "4")).isZero();
        assertThat(out).startsWith("5 ").contains("\n6 ");
        assertThat(server.requests.getFirst().params()).isEqualTo(Map.of("after", "4"));

        assertThat(run("events", "demo", "--json")).isZero();
        assertThat(out).contains("\"items\"", "\"id\" : 1", "\"id\" : 6", "\"nextCursor\" : null");
        assertThat(run("events", "--after", "-1")).isEqualTo(2);
    }

    @Test
    void eventsFollowPrintsTheLogThenTheLiveStreamUntilInterrupted() throws Exception {
        var streamDone = new CountDownLatch(1);
        server.on("GET /v1/events", (request, exchange) -> {
            if (request.accept().contains("text/event-stream")) {
                exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
                exchange.sendResponseHeaders(200, 0);
                var stream = exchange.getResponseBody();
                stream.write(("event: checkpoint\nid: 3\ndata: {\"sandboxId\": \"sbx_1\", \"checkpointId\": \"ckpt_2\", "
                        + "\"memory\": false, \"sizeBytes\": 0}\n\n").getBytes(StandardCharsets.UTF_8));
                stream.flush();
                await(streamDone); // a live stream stays open
                return;
            }
            respond(exchange, 200, "application/json",
                    ("{\"items\": [" + EVENTS[0] + ", " + EVENTS[1] + "], \"nextCursor\": null}").getBytes(StandardCharsets.UTF_8));
        });
        var outBuffer = new ByteArrayOutputStream();
        var exit = new AtomicInteger(-1);
        Thread follower = Thread.ofVirtual().start(() -> exit.set(Main.run(new String[] {"events", "--follow", "--json"},
                new PrintStream(outBuffer, true, StandardCharsets.UTF_8), System.err, InputStream.nullInputStream(), env)));
        try {
            until(() -> outBuffer.toString(StandardCharsets.UTF_8).lines().count() >= 3, Duration.ofSeconds(10));
            follower.interrupt();
            follower.join(Duration.ofSeconds(10));
        } finally {
            streamDone.countDown();
        }
        assertThat(follower.isAlive()).isFalse();
        assertThat(exit.get()).isZero();
        assertThat(outBuffer.toString(StandardCharsets.UTF_8).lines().toList()).containsExactly(
                "{\"id\":1,\"type\":\"lifecycle\",\"at\":\"2026-11-29T10:00:01.250Z\",\"data\":{\"sandboxId\":\"sbx_1\","
                        + "\"from\":\"none\",\"to\":\"running\",\"reason\":\"api\"}}",
                "{\"id\":2,\"type\":\"checkpoint\",\"at\":\"2026-11-29T10:00:02.250Z\",\"data\":{\"sandboxId\":\"sbx_1\","
                        + "\"checkpointId\":\"ckpt_1\",\"memory\":true,\"sizeBytes\":4404019}}",
                "{\"id\":3,\"type\":\"checkpoint\",\"at\":null,\"data\":{\"sandboxId\":\"sbx_1\","
                        + "\"checkpointId\":\"ckpt_2\",\"memory\":false,\"sizeBytes\":0}}");
        // The stream goes on after the last event the pages showed.
        var stream = server.requests.stream().filter(r -> r.accept().contains("text/event-stream")).toList();
        assertThat(stream).extracting(r -> r.params().get("after")).containsExactly("2");
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void until(BooleanSupplier condition, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) throw new AssertionError("condition not met within " + timeout);
            LockSupport.parkNanos(Duration.ofMillis(5).toNanos());
        }
    }
}
