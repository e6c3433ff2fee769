package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.stasis.testkit.Await;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Background processes through the REST API: start, list, output from offsets and followed, wait, signal, keepAlive, survival. */
@Tag("root")
class ProcessesApiIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CALM = "{\"lifecycle\": {\"pauseAfterIdle\": null, \"hibernateAfterIdle\": null}}";
    private static ServiceFixture service;
    private static RawApi api;

    @BeforeAll
    static void start() throws Exception {
        service = ServiceFixture.start("--idle-check", "200ms", "--process-output-limit", "1M");
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

    private static String sandbox(String body) {
        return api.post("/v1/sandboxes", body).get("id").asText();
    }

    private static String sandbox(String runtime, String body) {
        return sandbox(ServiceFixture.inRuntime(runtime, body));
    }

    private static JsonNode startProcess(String id, String script, String extra) {
        var body = JSON.createObjectNode();
        body.putArray("cmd").add("sh").add("-c").add(script);
        String json = body.toString();
        if (!extra.isEmpty()) json = json.substring(0, json.length() - 1) + ", " + extra + "}";
        var response = api.call("POST", "/v1/sandboxes/" + id + "/processes", json);
        assertThat(response.status()).as(response.body().toString()).isEqualTo(201);
        return response.body();
    }

    @EachRuntime
    void aBackgroundProcessRunsOnAndIsFoundAgain(String runtime) {
        String id = sandbox(runtime, CALM);
        var process = startProcess(id, "for i in 1 2 3; do echo line $i; sleep 0.2; done; echo oops >&2; exit 3", "\"tag\": \"counter\"");
        long pid = process.get("pid").asLong();
        assertThat(process.get("status").asText()).isEqualTo("running");
        assertThat(process.get("id").asText()).startsWith("prc_");
        assertThat(api.get("/v1/sandboxes/" + id + "/processes").get("items")).anySatisfy(p -> assertThat(p.get("tag").asText()).isEqualTo("counter"));

        var waited = api.get("/v1/sandboxes/" + id + "/processes/" + pid + "/wait?timeoutMs=10000");
        assertThat(waited.get("status").asText()).isEqualTo("exited");
        assertThat(waited.get("exitCode").asInt()).isEqualTo(3);
        var output = api.get("/v1/sandboxes/" + id + "/processes/" + pid + "/output");
        assertThat(output.get("stdout").asText()).isEqualTo("line 1\nline 2\nline 3\n");
        assertThat(output.get("stderr").asText()).isEqualTo("oops\n");
        var rest = api.get("/v1/sandboxes/" + id + "/processes/" + pid + "/output?offset=7&stderrOffset=5");
        assertThat(rest.get("stdout").asText()).isEqualTo("line 2\nline 3\n");
        assertThat(rest.get("stderr").asText()).isEmpty();
        assertThat(rest.get("stdoutOffset").asLong()).isEqualTo(21);

        assertThat(api.call("DELETE", "/v1/sandboxes/" + id + "/processes/" + pid, null).status()).isEqualTo(204);
        assertThat(api.call("GET", "/v1/sandboxes/" + id + "/processes/" + pid, null).errorCode()).isEqualTo("process_not_found");
    }

    @EachRuntime
    void signalsReachTheProcess(String runtime) {
        String id = sandbox(runtime, CALM);
        long pid = startProcess(id, "trap 'echo got-term; exit 0' TERM; while true; do sleep 0.1; done", "").get("pid").asLong();
        Await.until("the trap to be set", Duration.ofSeconds(10), () -> !api.sh(id, "ps -o pid,args | grep -c '[w]hile true'").isBlank());
        assertThat(api.call("POST", "/v1/sandboxes/" + id + "/processes/" + pid + "/signal", "{\"signal\": \"TERM\"}").status()).isEqualTo(200);
        var done = api.get("/v1/sandboxes/" + id + "/processes/" + pid + "/wait?timeoutMs=10000");
        assertThat(done.get("exitCode").asInt()).isZero();
        assertThat(api.get("/v1/sandboxes/" + id + "/processes/" + pid + "/output").get("stdout").asText()).isEqualTo("got-term\n");

        long sleeper = startProcess(id, "sleep 1000", "").get("pid").asLong();
        api.post("/v1/sandboxes/" + id + "/processes/" + sleeper + "/signal", "{\"signal\": \"KILL\"}");
        var killed = api.get("/v1/sandboxes/" + id + "/processes/" + sleeper + "/wait?timeoutMs=10000");
        assertThat(killed.get("signal").asText()).isEqualTo("KILL");
        assertThat(api.call("POST", "/v1/sandboxes/" + id + "/processes/" + sleeper + "/signal", "{\"signal\": \"TERM\"}").errorCode())
                .isEqualTo("invalid_state");
    }

    @EachRuntime
    void followingTheOutputGivesEveryByteOnceAcrossReconnects(String runtime) throws Exception {
        String id = sandbox(runtime, CALM);
        long pid = startProcess(id, "for i in $(seq 1 30); do echo tick $i; sleep 0.05; done", "").get("pid").asLong();
        var seen = new StringBuilder();
        String resumeFrom = null;
        try (var http = HttpClient.newHttpClient()) {
            while (true) {
                var request = HttpRequest.newBuilder(URI.create(service.url + "/v1/sandboxes/" + id + "/processes/" + pid + "/output?follow=true"))
                        .header("Authorization", "Bearer " + service.rootKey).header("Accept", "text/event-stream");
                if (resumeFrom != null) request.header("Last-Event-ID", resumeFrom);
                var response = http.send(request.GET().build(), HttpResponse.BodyHandlers.ofInputStream());
                boolean exited = false;
                int events = 0;
                try (var reader = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
                    String line, event = null, eventId = null;
                    while ((line = reader.readLine()) != null) {
                        if (line.startsWith("event: ")) event = line.substring(7);
                        else if (line.startsWith("id: ")) eventId = line.substring(4);
                        else if (line.startsWith("data: ") && "stdout".equals(event)) {
                            seen.append(JSON.readTree(line.substring(6)).get("data").asText());
                            resumeFrom = eventId;
                            if (++events == 3) break; // leave mid-stream, then reconnect from the last id
                        } else if (line.startsWith("data: ") && "exit".equals(event)) {
                            exited = true;
                            break;
                        }
                    }
                }
                if (exited) break;
            }
        }
        var expected = new StringBuilder();
        for (int i = 1; i <= 30; i++) expected.append("tick ").append(i).append('\n');
        assertThat(seen.toString()).isEqualTo(expected.toString());
    }

    /**
     * Followers of one process share one reader of its output: each one, whenever it joins and from
     * whatever offset, still gets every byte once and in order, with ids a client can resume from,
     * and then the exit.
     */
    @Test
    void manyFollowersOfOneProcessEachGetEveryByteOnce() throws Exception {
        String id = sandbox(CALM);
        long pid = startProcess(id, "sleep 0.3; for i in $(seq 1 60); do echo tick $i; echo err $i >&2; sleep 0.02; done; exit 4", "")
                .get("pid").asLong();
        var expectedOut = new StringBuilder();
        var expectedErr = new StringBuilder();
        for (int i = 1; i <= 60; i++) {
            expectedOut.append("tick ").append(i).append('\n');
            expectedErr.append("err ").append(i).append('\n');
        }
        record Seen(String stdout, String stderr, String lastId, int exitCode) {
        }
        var followers = new ArrayList<Future<Seen>>();
        try (var http = HttpClient.newHttpClient(); var threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int f = 0; f < 24; f++) {
                String lastEventId = f % 6 == 5 ? "7,6" : null; // some resume after "tick 1\n" and "err 1\n"
                followers.add(threads.submit(() -> {
                    var request = HttpRequest.newBuilder(URI.create(service.url + "/v1/sandboxes/" + id + "/processes/" + pid
                            + "/output?follow=true")).header("Authorization", "Bearer " + service.rootKey);
                    if (lastEventId != null) request.header("Last-Event-ID", lastEventId);
                    var response = http.send(request.GET().build(), HttpResponse.BodyHandlers.ofInputStream());
                    var out = new StringBuilder(lastEventId == null ? "" : "tick 1\n");
                    var err = new StringBuilder(lastEventId == null ? "" : "err 1\n");
                    String lastId = null;
                    try (var reader = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
                        String line, event = null, eventId = null;
                        while ((line = reader.readLine()) != null) {
                            if (line.startsWith("event: ")) event = line.substring(7);
                            else if (line.startsWith("id: ")) eventId = line.substring(4);
                            else if (line.startsWith("data: ")) {
                                var data = JSON.readTree(line.substring(6));
                                switch (event) {
                                    case "stdout" -> out.append(data.get("data").asText());
                                    case "stderr" -> err.append(data.get("data").asText());
                                    case "exit" -> {
                                        return new Seen(out.toString(), err.toString(), lastId, data.get("exitCode").asInt());
                                    }
                                    default -> throw new AssertionError("unexpected event " + event);
                                }
                                assertThat(data.get("offset").asLong()).isEqualTo("stdout".equals(event) ? out.length() : err.length());
                                lastId = eventId;
                            }
                        }
                    }
                    throw new AssertionError("the stream ended without an exit");
                }));
                Thread.sleep(40); // they join over the first second of output, some before it begins
            }
            for (var follower : followers) {
                var seen = follower.get(60, TimeUnit.SECONDS);
                assertThat(seen.stdout()).isEqualTo(expectedOut.toString());
                assertThat(seen.stderr()).isEqualTo(expectedErr.toString());
                assertThat(seen.lastId()).isEqualTo(expectedOut.length() + "," + expectedErr.length());
                assertThat(seen.exitCode()).isEqualTo(4);
            }
        }
    }

    @Test
    void outputBeyondTheLimitIsDroppedOldestFirstAndReadersAreTold() throws Exception {
        String id = sandbox(CALM);
        // 4 MiB of numbered lines, then the process waits: its output is bounded while it runs
        long pid = startProcess(id, "seq 1 600000; sleep 1000", "").get("pid").asLong();
        Await.until("the oldest output dropped", Duration.ofSeconds(30), () -> api.get(
                "/v1/sandboxes/" + id + "/processes/" + pid + "/output?offset=0").get("stdoutStart").asLong() > 0);
        var read = api.get("/v1/sandboxes/" + id + "/processes/" + pid + "/output?offset=0");
        long start = read.get("stdoutStart").asLong();
        long total = read.get("process").get("stdoutBytes").asLong();
        assertThat(total - start).as("about the limit is kept").isBetween(1L << 20, (2L << 20) + 4096);
        String text = read.get("stdout").asText();
        assertThat(text).doesNotContain("\0");
        assertThat(text.substring(text.indexOf('\n') + 1)).as("whole lines after the first cut one").matches("(?s)\\d+\n.*");
        assertThat(read.get("stdoutOffset").asLong()).isEqualTo(start + text.length());

        // a follower from 0 is told what was dropped, then gets the rest up to the last line
        var events = new ArrayList<String>();
        try (var http = HttpClient.newHttpClient()) {
            var request = HttpRequest.newBuilder(URI.create(service.url + "/v1/sandboxes/" + id + "/processes/" + pid + "/output?follow=true"))
                    .header("Authorization", "Bearer " + service.rootKey).GET().build();
            var response = http.send(request, HttpResponse.BodyHandlers.ofInputStream());
            try (var reader = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
                String line, event = null;
                var data = new StringBuilder();
                while ((line = reader.readLine()) != null) {
                    if (line.startsWith("event: ")) event = line.substring(7);
                    else if (line.startsWith("data: ") && "dropped".equals(event)) events.add("dropped " + line.substring(6));
                    else if (line.startsWith("data: ") && "stdout".equals(event)) {
                        data.append(JSON.readTree(line.substring(6)).get("data").asText());
                        if (data.toString().endsWith("600000\n")) break;
                    }
                }
            }
        }
        assertThat(events).hasSize(1);
        var dropped = JSON.readTree(events.getFirst().substring("dropped ".length()));
        assertThat(dropped.get("stream").asText()).isEqualTo("stdout");
        assertThat(dropped.get("from").asLong()).isZero();
        assertThat(dropped.get("to").asLong()).isGreaterThanOrEqualTo(start);
        api.post("/v1/sandboxes/" + id + "/processes/" + pid + "/signal", "{\"signal\": \"KILL\"}");
    }

    @EachRuntime
    void aFollowerStaysConnectedAcrossPauseAndHibernation(String runtime) throws Exception {
        String id = sandbox(runtime, CALM);
        long pid = startProcess(id, "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); echo $i; sleep 0.02; done", "").get("pid").asLong();
        var lines = new LinkedBlockingQueue<Long>();
        var text = new StringBuilder();
        try (var http = HttpClient.newHttpClient()) {
            var request = HttpRequest.newBuilder(URI.create(service.url + "/v1/sandboxes/" + id + "/processes/" + pid + "/output?follow=true"))
                    .header("Authorization", "Bearer " + service.rootKey).GET().build();
            var response = http.send(request, HttpResponse.BodyHandlers.ofInputStream());
            var reader = Thread.ofVirtual().start(() -> {
                try (var in = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
                    String line, event = null;
                    while ((line = in.readLine()) != null) {
                        if (line.startsWith("event: ")) event = line.substring(7);
                        else if (line.startsWith("data: ") && "stdout".equals(event)) {
                            text.append(JSON.readTree(line.substring(6)).get("data").asText());
                            int end;
                            while ((end = text.indexOf("\n")) >= 0) {
                                lines.add(Long.parseLong(text.substring(0, end)));
                                text.delete(0, end + 1);
                            }
                        }
                    }
                } catch (IOException e) {
                    // closed by the test
                }
            });
            Await.until("output", Duration.ofSeconds(10), () -> lines.size() > 5);
            api.post("/v1/sandboxes/" + id + "/pause", null);
            Thread.sleep(300);
            api.post("/v1/sandboxes/" + id + "/resume", null);
            int afterPause = lines.size();
            Await.until("output after the pause", Duration.ofSeconds(10), () -> lines.size() > afterPause + 5);
            api.post("/v1/sandboxes/" + id + "/hibernate", null);
            assertThat(api.get("/v1/sandboxes/" + id).get("state").asText()).isEqualTo("hibernated");
            int beforeResume = lines.size();
            api.post("/v1/sandboxes/" + id + "/resume", null);
            Await.until("output after the hibernation, on the same connection", Duration.ofSeconds(15), () -> lines.size() > beforeResume + 5);
            assertThat(reader.isAlive()).isTrue();
            response.body().close();
        }
        var seen = new ArrayList<>(lines);
        for (int i = 0; i < seen.size(); i++) assertThat(seen.get(i)).as("line %d, nothing lost or repeated", i).isEqualTo(i + 1L);
        api.post("/v1/sandboxes/" + id + "/processes/" + pid + "/signal", "{\"signal\": \"KILL\"}");
    }

    @EachRuntime
    void processesSurviveHibernationAndForksHaveTheirOwnCopies(String runtime) {
        String id = sandbox(runtime, CALM);
        long pid = startProcess(id, "i=0; while true; do i=$((i+1)); echo $i; sleep 0.05; done", "").get("pid").asLong();
        Await.until("output", Duration.ofSeconds(10), () -> stdoutBytes(id, pid) > 10);
        api.post("/v1/sandboxes/" + id + "/hibernate", null);
        long atHibernation = stdoutBytes(id, pid); // auto-resumes
        Await.until("the process to go on after the resume", Duration.ofSeconds(10), () -> stdoutBytes(id, pid) > atHibernation + 10);
        assertThat(api.get("/v1/sandboxes/" + id + "/processes/" + pid).get("status").asText()).isEqualTo("running");

        String fork = api.post("/v1/sandboxes/" + id + "/fork", "{}").get("items").get(0).get("id").asText();
        long inFork = stdoutBytes(fork, pid);
        Await.until("the fork's copy to go on", Duration.ofSeconds(10), () -> stdoutBytes(fork, pid) > inFork + 10);
        api.post("/v1/sandboxes/" + fork + "/processes/" + pid + "/signal", "{\"signal\": \"KILL\"}");
        assertThat(api.get("/v1/sandboxes/" + fork + "/processes/" + pid + "/wait?timeoutMs=5000").get("status").asText()).isEqualTo("exited");
        assertThat(api.get("/v1/sandboxes/" + id + "/processes/" + pid).get("status").asText()).as("the parent's runs on").isEqualTo("running");

        api.post("/v1/sandboxes/" + id + "/stop", null);
        api.post("/v1/sandboxes/" + id + "/start", null);
        var afterStop = api.get("/v1/sandboxes/" + id + "/processes/" + pid);
        assertThat(afterStop.get("status").asText()).as("ended by the stop's SIGTERM").isEqualTo("exited");
        assertThat(afterStop.get("signal").asText()).isEqualTo("TERM");
    }

    @EachRuntime
    void aProcessWhoseSandboxDiedIsReportedLost(String runtime) throws Exception {
        String id = sandbox(runtime, CALM);
        long pid = startProcess(id, "sleep 1000", "").get("pid").asLong();
        // runc's init, or gVisor's sentry: killed as a host crash would, no exit status gets written
        String stateDir = runtime.equals("gvisor") ? "runtime-gvisor" : "runtime";
        long init = Long.parseLong(Files.readString(service.dataDir.resolve(stateDir + "/bundles/" + id + "/init.pid")).strip());
        ProcessHandle.of(init).ifPresent(ProcessHandle::destroyForcibly);
        Await.until("the sandbox's init to be gone", Duration.ofSeconds(10), () -> ProcessHandle.of(init).map(h -> !h.isAlive()).orElse(true));
        // Noticed without a call: stopped with its reason, and an event says so.
        Await.until("the sandbox to be stopped", Duration.ofSeconds(10), () -> api.get("/v1/sandboxes/" + id).get("state").asText().equals("stopped"));
        assertThat(api.get("/v1/sandboxes/" + id).get("stateReason").asText()).isEqualTo("init_exited");
        var stopped = new ArrayList<JsonNode>();
        api.get("/v1/sandboxes/" + id + "/events?limit=1000").get("items").forEach(e -> {
            if (e.get("type").asText().equals("lifecycle") && e.get("data").get("to").asText().equals("stopped")) stopped.add(e);
        });
        assertThat(stopped).singleElement().satisfies(e -> assertThat(e.get("data").get("reason").asText()).isEqualTo("init_exited"));
        var refused = api.call("POST", "/v1/sandboxes/" + id + "/exec", "{\"cmd\": [\"true\"]}");
        assertThat(refused.errorCode()).isEqualTo("invalid_state");
        api.post("/v1/sandboxes/" + id + "/start", null);
        assertThat(api.get("/v1/sandboxes/" + id + "/processes/" + pid).get("status").asText()).isEqualTo("lost");
    }

    /** {@code kill 1} inside: stasis-init ends every process and itself, as on a stop; the sandbox is reported stopped with why. */
    @EachRuntime
    void killOneInsideStopsTheSandboxAndSaysWhy(String runtime) {
        String id = sandbox(runtime, CALM);
        api.call("POST", "/v1/sandboxes/" + id + "/exec", "{\"cmd\": [\"sh\", \"-c\", \"kill 1; sleep 30\"], \"timeoutMs\": 20000}");
        Await.until("the sandbox to be stopped", Duration.ofSeconds(20), () -> api.get("/v1/sandboxes/" + id).get("state").asText().equals("stopped"));
        assertThat(api.get("/v1/sandboxes/" + id).get("stateReason").asText()).isEqualTo("init_exited");
        api.post("/v1/sandboxes/" + id + "/start", null);
        assertThat(api.sh(id, "echo back")).isEqualTo("back\n");
    }

    private static long stdoutBytes(String id, long pid) {
        return api.get("/v1/sandboxes/" + id + "/processes/" + pid).get("stdoutBytes").asLong();
    }

    @EachRuntime
    void aKeepAliveProcessKeepsItsSandboxAwake(String runtime) {
        String kept = sandbox(runtime, "{\"lifecycle\": {\"pauseAfterIdle\": \"1s\"}}");
        String deadline = sandbox(runtime, "{\"lifecycle\": {\"pauseAfterIdle\": \"1s\"}}");
        String plain = sandbox(runtime, "{\"lifecycle\": {\"pauseAfterIdle\": \"1s\"}}");
        startProcess(kept, "sleep 1000", "\"keepAlive\": true");
        startProcess(deadline, "sleep 1000", "\"keepAlive\": true, \"keepAliveFor\": \"2s\"");
        startProcess(plain, "sleep 1000", "");
        Await.until("the plain one to pause", Duration.ofSeconds(10), () -> state(plain).equals("paused"));
        Await.until("the one with a deadline to pause after it", Duration.ofSeconds(15), () -> state(deadline).equals("paused"));
        assertThat(state(kept)).isEqualTo("running");
    }

    private static String state(String id) {
        return api.get("/v1/sandboxes/" + id).get("state").asText();
    }

    @Test
    void badProcessRequests() {
        String id = sandbox(CALM);
        String base = "/v1/sandboxes/" + id + "/processes";
        assertThat(api.call("POST", base, "{}").errorCode()).isEqualTo("invalid_request");
        assertThat(api.call("POST", base, "{\"cmd\": [\"true\"], \"background\": false}").errorCode()).isEqualTo("invalid_request");
        assertThat(api.call("POST", base, "{\"cmd\": [\"true\"], \"keepAliveFor\": \"1m\"}").errorCode()).isEqualTo("invalid_request");
        assertThat(api.call("POST", base, "{\"cmd\": [\"true\"], \"cwd\": \"/nope\"}").errorCode()).isEqualTo("invalid_request");
        assertThat(api.call("GET", base + "/999999", null).errorCode()).isEqualTo("process_not_found");
        assertThat(api.call("GET", base + "/abc", null).errorCode()).isEqualTo("invalid_request");
        assertThat(api.call("GET", base + "/1/output?offset=-1", null).errorCode()).isEqualTo("invalid_request");
        long pid = startProcess(id, "sleep 1000", "").get("pid").asLong();
        assertThat(api.call("DELETE", base + "/" + pid, null).errorCode()).isEqualTo("invalid_state");
        assertThat(api.call("POST", base + "/" + pid + "/signal", "{\"signal\": \"NOPE\"}").errorCode()).isEqualTo("invalid_request");
        List<String> names = new ArrayList<>();
        api.get(base).get("items").forEach(p -> names.add(p.get("cmd").get(0).asText()));
        assertThat(names).containsOnly("sh");
    }
}
