package io.stasis.sdk;

import static io.stasis.sdk.FakeApi.respond;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Lifecycle actions, the idle policy, checkpoints, forks and events against documented responses. */
class LiveStateTest {
    static final String LIFECYCLE = """
            {"pauseAfterIdle": "15s", "standbyAfterIdle": "2m", "hibernateAfterIdle": "10m", "stopAfterIdle": null,
             "deleteAfterIdle": "30d", "maxAge": "1h", "atMaxAge": "standby", "wakeFor": "5m", "autoResume": true}""";

    static final String HIBERNATED = """
            {"id": "sbx_1", "name": "try-1", "template": "tiny", "state": "hibernated", "stateReason": null,
             "hibernation": {"checkpointId": "ckpt_h", "imageBytes": 421033, "takenAt": "2026-11-29T10:05:00Z"},
             "createdAt": "2026-11-29T10:00:00Z", "resources": {"cpus": 1.0, "memoryMb": 1024, "pids": 512},
             "env": {}, "metadata": {}, "parentId": "sbx_p", "checkpointId": "ckpt_f",
             "lifecycle": %s, "generation": 7}""".formatted(LIFECYCLE);

    static final String CHECKPOINT = """
            {"id": "ckpt_1", "sandboxId": "sbx_1", "name": "before-tests", "memory": true, "purpose": "user",
             "sizeBytes": 421033, "createdAt": "2026-11-29T10:00:00Z", "durable": true, "upload": "durable",
             "logicalBytes": 900000, "storedBytes": 300000, "uploadError": null, "spares": {"wanted": 2, "ready": 1},
             "runtime": "gvisor"}""";

    private FakeApi api;
    private StasisClient client;

    @BeforeEach
    void start() throws IOException {
        api = new FakeApi();
        client = StasisClient.builder().url(api.url()).apiKey("sk_test").requestTimeout(Duration.ofSeconds(5)).build();
    }

    @AfterEach
    void stop() {
        client.close();
        api.close();
    }

    static String inState(String state) {
        return StasisClientTest.sandbox("sbx_1").replace("\"running\"", "\"" + state + "\"");
    }

    @Test
    void readsTheNewSandboxFields() {
        api.json("GET /v1/sandboxes/sbx_1", 200, HIBERNATED);
        Sandbox s = client.sandboxes().get("sbx_1");
        assertThat(s.state()).isEqualTo("hibernated");
        assertThat(s.isHibernated()).isTrue();
        assertThat(s.isRunning() || s.isPaused() || s.isStopped()).isFalse();
        assertThat(s.hibernation()).isEqualTo(new Hibernation("ckpt_h", 421033, Instant.parse("2026-11-29T10:05:00Z")));
        assertThat(s.parentId()).isEqualTo("sbx_p");
        assertThat(s.checkpointId()).isEqualTo("ckpt_f");
        assertThat(s.generation()).isEqualTo(7);
        assertThat(s.lifecycle()).isEqualTo(new LifecyclePolicy(Duration.ofSeconds(15), Duration.ofMinutes(2), Duration.ofMinutes(10), null,
                Duration.ofDays(30), Duration.ofHours(1), "standby", Duration.ofMinutes(5), true));
    }

    @Test
    void writesTheNewFieldsBackInTheApiShape() {
        api.json("GET /v1/sandboxes/sbx_1", 200, HIBERNATED);
        String json = StasisJson.write(client.sandboxes().get("sbx_1")).replaceAll("\\s", "");
        assertThat(json).contains("\"state\":\"hibernated\",\"stateReason\":null,"
                        + "\"hibernation\":{\"checkpointId\":\"ckpt_h\",\"imageBytes\":421033,\"takenAt\":\"2026-11-29T10:05:00Z\"}",
                "\"parentId\":\"sbx_p\",\"checkpointId\":\"ckpt_f\",\"lifecycle\":" + LIFECYCLE.replaceAll("\\s", "") + ",\"generation\":7}");
    }

    @Test
    void anOlderServerWithoutTheNewFieldsStillReads() {
        api.json("GET /v1/sandboxes/sbx_1", 200, StasisClientTest.sandbox("sbx_1"));
        Sandbox s = client.sandboxes().get("sbx_1");
        assertThat(s.hibernation()).isNull();
        assertThat(s.lifecycle()).isNull();
        assertThat(s.parentId()).isNull();
        assertThat(s.generation()).as("before generations").isZero();
    }

    @Test
    void aResumeCanExpectAGeneration() {
        api.json("POST /v1/sandboxes/sbx_1/resume", 200, HIBERNATED.replace("\"hibernated\"", "\"running\""));
        assertThat(client.sandboxes().resume("sbx_1", 6).state()).isEqualTo("running");
        assertThat(new String(api.last().body(), StandardCharsets.UTF_8)).isEqualTo("{\"expectGeneration\":6}");
        api.json("POST /v1/sandboxes/sbx_1/resume", 409, """
                {"error": {"code": "generation_mismatch", "message": "older", "details": {"expected": 9, "actual": 7}}}""");
        assertThatThrownBy(() -> client.sandboxes().resume("sbx_1", 9)).isInstanceOf(ConflictException.class)
                .hasMessageContaining("older");
    }

    @ParameterizedTest
    @ValueSource(strings = {"pause", "resume", "hibernate", "stop", "start"})
    void eachActionPostsWithoutABodyAndReturnsTheNewState(String verb) {
        String after = switch (verb) {
            case "pause" -> "paused";
            case "hibernate" -> "hibernated";
            case "stop" -> "stopped";
            default -> "running";
        };
        api.json("GET /v1/sandboxes/sbx_1", 200, StasisClientTest.sandbox("sbx_1"));
        api.json("POST /v1/sandboxes/sbx_1/" + verb, 200, inState(after));
        api.json("POST /v1/sandboxes/my%20box/" + verb, 200, inState(after));
        Sandbox before = client.sandboxes().get("sbx_1");
        Sandbox changed = switch (verb) {
            case "pause" -> before.pause();
            case "resume" -> before.resume();
            case "hibernate" -> before.hibernate();
            case "stop" -> before.stop();
            default -> before.start();
        };
        assertThat(api.last().method()).isEqualTo("POST");
        assertThat(api.last().body()).isEmpty();
        assertThat(changed.state()).isEqualTo(after);
        assertThat(before.state()).isEqualTo("running"); // a snapshot: the old object is unchanged

        Sandbox byName = switch (verb) {
            case "pause" -> client.sandboxes().pause("my box");
            case "resume" -> client.sandboxes().resume("my box");
            case "hibernate" -> client.sandboxes().hibernate("my box");
            case "stop" -> client.sandboxes().stop("my box");
            default -> client.sandboxes().start("my box");
        };
        assertThat(byName.state()).isEqualTo(after);
    }

    @Test
    void aWrongStateIsAConflict() {
        api.json("POST /v1/sandboxes/sbx_1/pause", 409, """
                {"error": {"code": "invalid_state", "message": "sandbox sbx_1 is stopped", "details": {"sandbox": "sbx_1"}}}""");
        assertThatThrownBy(() -> client.sandboxes().pause("sbx_1"))
                .isInstanceOfSatisfying(ConflictException.class, e -> assertThat(e.code()).isEqualTo("invalid_state"));
    }

    @Test
    void updateLifecycleSendsOnlyTheNamedFields() {
        api.json("PATCH /v1/sandboxes/sbx_1/lifecycle", 200, HIBERNATED);
        Sandbox s = client.sandboxes().updateLifecycle("sbx_1", LifecycleUpdate.builder()
                .pauseAfterIdle(Duration.ofSeconds(90))
                .stopAfterIdle(null)
                .hibernateAfterIdle(Duration.ofSeconds(600))
                .deleteAfterIdle(Duration.ofMillis(1500))
                .autoResume(false)
                .build());
        assertThat(api.last().bodyText()).isEqualTo("{\"pauseAfterIdle\":\"90s\",\"stopAfterIdle\":null,"
                + "\"hibernateAfterIdle\":\"10m\",\"deleteAfterIdle\":\"1500ms\",\"autoResume\":false}");
        assertThat(api.last().header("Content-Type")).isEqualTo("application/json");
        assertThat(s.lifecycle().autoResume()).isTrue();

        client.sandboxes().updateLifecycle("sbx_1", LifecycleUpdate.builder().maxAge(Duration.ofDays(7)).build());
        assertThat(api.last().bodyText()).isEqualTo("{\"maxAge\":\"7d\"}");
        client.sandboxes().updateLifecycle("sbx_1", LifecycleUpdate.builder().build());
        assertThat(api.last().bodyText()).isEqualTo("{}");
    }

    @Test
    void lifecycleDurationsMustBeExpressible() {
        var b = LifecycleUpdate.builder();
        assertThatThrownBy(() -> b.pauseAfterIdle(Duration.ZERO)).hasMessage("pauseAfterIdle: a duration must be positive, was PT0S");
        assertThatThrownBy(() -> b.maxAge(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> b.stopAfterIdle(Duration.ofNanos(1_500_000))).hasMessageContaining("whole milliseconds");
        assertThatThrownBy(() -> b.deleteAfterIdle(Duration.ofMillis(1_000_000_001))).hasMessageContaining("9 digits");
        assertThatThrownBy(() -> b.deleteAfterIdle(Duration.ofDays(1_000_000_000))).hasMessageContaining("9 digits");
        assertThat(b.deleteAfterIdle(Duration.ofDays(999_999_999)).build().fields()).containsEntry("deleteAfterIdle", "999999999d");
        assertThat(LifecycleUpdate.builder().pauseAfterIdle(Duration.ofHours(2)).build())
                .isEqualTo(LifecycleUpdate.builder().pauseAfterIdle(Duration.ofMinutes(120)).build());
    }

    @Test
    void createSendsTheLifecycleChangesOnly() {
        api.json("POST /v1/sandboxes", 201, HIBERNATED);
        client.sandboxes().create(CreateSandboxRequest.builder().template("tiny")
                .lifecycle(LifecycleUpdate.builder().pauseAfterIdle(null).hibernateAfterIdle(Duration.ofMinutes(1)).build())
                .build());
        assertThat(api.last().bodyText()).isEqualTo("{\"template\":\"tiny\","
                + "\"lifecycle\":{\"pauseAfterIdle\":null,\"hibernateAfterIdle\":\"1m\"}}");
        client.sandboxes().create(CreateSandboxRequest.builder().lifecycle(LifecycleUpdate.builder().build()).build());
        assertThat(api.last().bodyText()).isEqualTo("{}");
        api.json("POST /v1/sandboxes", 201, HIBERNATED.replace("{\"id\"", "{\"durability\": {\"checkpointEvery\": \"5m\"}, \"id\""));
        var kept = client.sandboxes().create(CreateSandboxRequest.builder().checkpointEvery(Duration.ofMinutes(5)).build());
        assertThat(api.last().bodyText()).isEqualTo("{\"durability\":{\"checkpointEvery\":\"5m\"}}");
        assertThat(kept.info().durability()).containsEntry("checkpointEvery", "5m");
    }

    @Test
    void checkpointsAreTakenListedFetchedAndDeleted() {
        api.json("GET /v1/sandboxes/sbx_1", 200, StasisClientTest.sandbox("sbx_1"));
        api.json("POST /v1/sandboxes/sbx_1/checkpoints", 201, CHECKPOINT);
        api.json("GET /v1/sandboxes/sbx_1/checkpoints", 200, "{\"items\": [" + CHECKPOINT + ", "
                + CHECKPOINT.replace("ckpt_1", "ckpt_2").replace("\"before-tests\"", "null")
                .replace("\"memory\": true", "\"memory\": false").replace("\"user\"", "\"fork\"")
                .replace("421033", "0") + "], \"nextCursor\": null}");
        api.json("GET /v1/checkpoints/ckpt_1", 200, CHECKPOINT);
        api.on("DELETE /v1/checkpoints/ckpt_1", (r, e) -> respond(e, 204, null, ""));
        Sandbox sandbox = client.sandboxes().get("sbx_1");

        Checkpoint c = sandbox.checkpoint("before-tests", true);
        assertThat(api.last().bodyText()).isEqualTo("{\"name\":\"before-tests\",\"memory\":true}");
        assertThat(c.id()).isEqualTo("ckpt_1");
        assertThat(c.sandboxId()).isEqualTo("sbx_1");
        assertThat(c.hasMemory()).isTrue();
        assertThat(c.purpose()).isEqualTo("user");
        assertThat(c.sizeBytes()).isEqualTo(421033);
        assertThat(c.createdAt()).isEqualTo(Instant.parse("2026-11-29T10:00:00Z"));
        assertThat(c.durable()).isTrue();
        assertThat(c.uploadState()).isEqualTo("durable");
        assertThat(c.storedBytes()).isEqualTo(300000L);
        assertThat(c.logicalBytes()).isEqualTo(900000L);
        assertThat(c.spares()).isEqualTo(new CheckpointInfo.Spares(2, 1));
        assertThat(c.info().runtime()).isEqualTo("gvisor");
        assertThat(StasisJson.write(c).replaceAll("\\s", "")).isEqualTo(CHECKPOINT.replaceAll("\\s", ""));

        sandbox.checkpoint(CheckpointRequest.builder().memory(false).build());
        assertThat(api.last().bodyText()).isEqualTo("{\"memory\":false}");
        sandbox.checkpoint(CheckpointRequest.builder().name("x").build());
        assertThat(api.last().bodyText()).isEqualTo("{\"name\":\"x\",\"memory\":true}");
        sandbox.checkpoint(CheckpointRequest.builder().spares(3).build());
        assertThat(api.last().bodyText()).isEqualTo("{\"memory\":true,\"spares\":3}");
        api.json("PUT /v1/checkpoints/ckpt_1/spares", 200, CHECKPOINT);
        assertThat(c.keepSpares(2).spares().wanted()).isEqualTo(2);
        assertThat(api.last().bodyText()).isEqualTo("{\"count\":2}");

        List<Checkpoint> all = sandbox.checkpoints();
        assertThat(all).extracting(Checkpoint::id).containsExactly("ckpt_1", "ckpt_2");
        assertThat(all.get(1).name()).isNull();
        assertThat(all.get(1).hasMemory()).isFalse();
        assertThat(all.get(1).purpose()).isEqualTo("fork");

        assertThat(client.checkpoints().get("ckpt_1").name()).isEqualTo("before-tests");
        client.checkpoints().get("ckpt_1").delete();
        assertThat(api.last().method()).isEqualTo("DELETE");
        assertThat(api.last().path()).isEqualTo("/v1/checkpoints/ckpt_1");
        client.checkpoints().delete("ckpt_1");
        assertThat(api.last().method()).isEqualTo("DELETE");
    }

    @Test
    void durableCheckpointsSyncListAndRestore() {
        api.json("GET /v1/sandboxes/sbx_1", 200, StasisClientTest.sandbox("sbx_1"));
        api.json("POST /v1/sandboxes/sbx_1/checkpoints", 201, CHECKPOINT);
        api.json("POST /v1/checkpoints/ckpt_1/sync", 200, CHECKPOINT);
        api.json("GET /v1/checkpoints", 200, "{\"items\": [" + CHECKPOINT + "], \"nextCursor\": null}");
        api.json("POST /v1/sandboxes", 201, StasisClientTest.sandbox("sbx_2"));
        var sandbox = client.sandboxes().get("sbx_1");
        sandbox.checkpoint(CheckpointRequest.builder().name("kept").durable(true).build());
        assertThat(api.last().bodyText()).isEqualTo("{\"name\":\"kept\",\"memory\":true,\"durable\":true}");
        assertThat(client.checkpoints().sync("ckpt_1", Duration.ofSeconds(30)).durable()).isTrue();
        assertThat(api.last().path()).startsWith("/v1/checkpoints/ckpt_1/sync");
        assertThat(client.checkpoints().list()).extracting(Checkpoint::id).containsExactly("ckpt_1");
        assertThat(client.sandboxes().create(CreateSandboxRequest.fromCheckpoint("ckpt_1", "back")).id()).isEqualTo("sbx_2");
        assertThat(api.last().bodyText()).isEqualTo("{\"name\":\"back\",\"fromCheckpoint\":\"ckpt_1\"}");
    }

    @Test
    void aMissingCheckpointIsNotFound() {
        api.json("GET /v1/checkpoints/ckpt_gone", 404, """
                {"error": {"code": "checkpoint_not_found", "message": "no checkpoint ckpt_gone", "details": {"checkpoint": "ckpt_gone"}}}""");
        api.json("POST /v1/sandboxes/sbx_1/fork", 404, """
                {"error": {"code": "checkpoint_not_found", "message": "no checkpoint ckpt_gone", "details": {}}}""");
        assertThatThrownBy(() -> client.checkpoints().get("ckpt_gone"))
                .isInstanceOfSatisfying(NotFoundException.class, e -> {
                    assertThat(e.code()).isEqualTo("checkpoint_not_found");
                    assertThat(e.details()).containsEntry("checkpoint", "ckpt_gone");
                });
        assertThatThrownBy(() -> client.sandboxes().fork("sbx_1", ForkRequest.builder().checkpoint("ckpt_gone").build()))
                .isInstanceOf(NotFoundException.class);
        assertThatThrownBy(() -> client.checkpoints().get(" ")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void forksSendOnlyWhatIsSetAndReturnEverySandbox() {
        String child = HIBERNATED.replace("\"hibernated\"", "\"running\"");
        api.json("POST /v1/sandboxes/sbx_p/fork", 201, "{\"items\": [" + child + ", "
                + child.replace("sbx_1", "sbx_2").replace("try-1", "try-2") + "], \"nextCursor\": null}");
        api.json("GET /v1/sandboxes/sbx_p/forks", 200, "{\"items\": [" + child + "], \"nextCursor\": null}");
        api.json("POST /v1/sandboxes/sbx_1/fork", 201, "{\"items\": [" + child + "]}");

        List<Sandbox> forks = client.sandboxes().fork("sbx_p",
                ForkRequest.builder().checkpoint("ckpt_f").count(2).name("try").build());
        assertThat(api.last().bodyText()).isEqualTo("{\"checkpoint\":\"ckpt_f\",\"count\":2,\"name\":\"try\"}");
        assertThat(forks).extracting(Sandbox::id).containsExactly("sbx_1", "sbx_2");
        assertThat(forks).extracting(Sandbox::name).containsExactly("try-1", "try-2");
        assertThat(forks.getFirst().parentId()).isEqualTo("sbx_p");

        assertThat(client.sandboxes().forks("sbx_p")).extracting(Sandbox::id).containsExactly("sbx_1");

        Sandbox only = forks.getFirst().fork().getFirst();
        assertThat(api.last().bodyText()).isEqualTo("{}");
        assertThat(only.checkpointId()).isEqualTo("ckpt_f");

        assertThatThrownBy(() -> ForkRequest.builder().count(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ForkRequest.builder().count(101)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aCheckpointForksItsOwnSandbox() {
        api.json("GET /v1/checkpoints/ckpt_1", 200, CHECKPOINT);
        api.json("POST /v1/sandboxes/sbx_1/fork", 201, "{\"items\": [" + HIBERNATED + "], \"nextCursor\": null}");
        List<Sandbox> forks = client.checkpoints().get("ckpt_1").fork(3);
        assertThat(api.last().bodyText()).isEqualTo("{\"checkpoint\":\"ckpt_1\",\"count\":3}");
        assertThat(forks).hasSize(1);
    }

    private static String event(long id, String type, String data) {
        return "{\"id\": %d, \"type\": \"%s\", \"at\": \"2026-11-29T10:00:0%dZ\", \"data\": %s}".formatted(id, type, id % 10, data);
    }

    @Test
    void eventsPageByTheLastIdAndIterateOverAll() {
        api.on("GET /v1/sandboxes/sbx_1/events", (request, exchange) -> {
            String query = request.query() == null ? "" : request.query();
            String body = query.equals("after=2")
                    ? "{\"items\": [" + event(3, "fork", "{\"sandboxId\": \"sbx_1\", \"checkpointId\": \"ckpt_1\", "
                    + "\"children\": [\"sbx_2\", \"sbx_3\"]}") + "], \"nextCursor\": null}"
                    : "{\"items\": [" + event(1, "lifecycle", "{\"sandboxId\": \"sbx_1\", \"from\": \"none\", "
                    + "\"to\": \"running\", \"reason\": \"api\"}") + ", " + event(2, "checkpoint",
                    "{\"sandboxId\": \"sbx_1\", \"checkpointId\": \"ckpt_1\", \"memory\": true, \"sizeBytes\": 5000000000}")
                    + "], \"nextCursor\": \"2\"}";
            respond(exchange, 200, "application/json", body);
        });
        Page<Event> first = client.sandboxes().events("sbx_1");
        assertThat(api.last().query()).isNull();
        assertThat(first.items()).extracting(Event::id).containsExactly(1L, 2L);
        assertThat(first.nextCursor()).isEqualTo("2");
        Event created = first.items().getFirst();
        assertThat(created.type()).isEqualTo("lifecycle");
        assertThat(created.at()).isEqualTo(Instant.parse("2026-11-29T10:00:01Z"));
        assertThat(created.sandboxId()).isEqualTo("sbx_1");
        assertThat(created.data()).containsEntry("to", "running").containsEntry("reason", "api");
        assertThat(first.items().get(1).data()).containsEntry("memory", true).containsEntry("sizeBytes", 5_000_000_000L);

        assertThat(first.stream().map(Event::id).toList()).containsExactly(1L, 2L, 3L);
        assertThat(api.last().query()).isEqualTo("after=2");
        Event fork = client.sandboxes().eventsAfter("sbx_1", 2).items().getFirst();
        assertThat(fork.data().get("children")).isEqualTo(List.of("sbx_2", "sbx_3"));
        assertThat(StasisJson.write(fork).replaceAll("\\s", "")).isEqualTo("{\"id\":3,\"type\":\"fork\","
                + "\"at\":\"2026-11-29T10:00:03Z\",\"data\":{\"sandboxId\":\"sbx_1\",\"checkpointId\":\"ckpt_1\","
                + "\"children\":[\"sbx_2\",\"sbx_3\"]}}");
    }

    @Test
    void allEventsFromTheClient() {
        api.on("GET /v1/events", (request, exchange) -> respond(exchange, 200, "application/json",
                "{\"items\": [" + event(7, "error", "{\"sandboxId\": \"sbx_9\", \"step\": \"restore\", "
                        + "\"message\": \"criu failed\", \"future\": null}") + "], \"nextCursor\": null}"));
        Event error = client.eventsAfter(6).items().getFirst();
        assertThat(api.last().query()).isEqualTo("after=6");
        assertThat(error.string("message")).isEqualTo("criu failed");
        assertThat(error.data()).containsEntry("future", null);
        assertThat(client.events().hasNextPage()).isFalse();
        assertThat(api.last().query()).isNull();
        assertThatThrownBy(() -> client.eventsAfter(-1)).isInstanceOf(IllegalArgumentException.class);
        assertThat(StasisJson.writeLine(error)).doesNotContain("\n").startsWith("{\"id\":7,\"type\":\"error\",");
    }
}
