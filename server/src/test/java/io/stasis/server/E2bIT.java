package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.stasis.sdk.ProcessRequest;
import io.stasis.testkit.Await;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The E2B protocol at /e2b against a real service, driven by the official e2b SDK from npm with
 * its own settings only (E2B_API_URL, E2B_SANDBOX_URL, E2B_API_KEY): keys in E2B's form, commands,
 * files, watches, pause and connect, errors.
 */
@Tag("root")
class E2bIT {
    @AutoClose
    private static ServiceFixture service;

    @BeforeAll
    static void start() throws IOException {
        service = ServiceFixture.start();
    }

    @Test
    void aKeyInE2bsFormWorksOnEveryRouteAndAnUnknownFormIsRefused() {
        try (var root = new RawApi(service.url, service.rootKey)) {
            var issued = root.post("/v1/tenants/ten_default/keys", "{\"format\": \"e2b\"}");
            String secret = issued.get("secret").asText();
            assertThat(secret).matches("e2b_[0-9a-f]{40}");
            try (var e2bKey = new RawApi(service.url, secret)) {
                assertThat(e2bKey.call("GET", "/v1/sandboxes", null).status()).isEqualTo(200);
            }
            assertThat(root.post("/v1/tenants/ten_default/keys", "{}").get("secret").asText()).startsWith("sk_");
            var refused = root.call("POST", "/v1/tenants/ten_default/keys", "{\"format\": \"aws\"}");
            assertThat(refused.status()).isEqualTo(422);
            assertThat(refused.body().path("error").path("message").asText()).contains("format");
            root.call("DELETE", "/v1/tenants/ten_default/keys/" + issued.get("id").asText(), null);
        }
    }

    /** Mistakes a client can make get a clear 4xx in E2B's or Connect's form: never a 500, never a hang. */
    @Test
    void badRequestsGetClearErrorsInE2bsForm() throws Exception {
        try (var http = HttpClient.newHttpClient()) {
            record Case(String method, String path, Map<String, String> headers, String body, int status, String says) {
            }
            String key = service.rootKey;
            var cases = List.of(
                    new Case("POST", "/e2b/v2/sandboxes", Map.of(), "{}", 401, "API key is required"),
                    new Case("POST", "/e2b/v2/sandboxes", Map.of("X-API-KEY", "e2b_" + "0".repeat(40)), "{}", 401, "unauthenticated"),
                    new Case("POST", "/e2b/v2/sandboxes", Map.of("X-API-KEY", key), "{not json", 400, "not JSON"),
                    new Case("POST", "/e2b/v2/sandboxes", Map.of("X-API-KEY", key), "[1]", 400, "JSON object"),
                    new Case("POST", "/e2b/v2/sandboxes", Map.of("X-API-KEY", key), "{\"templateID\": 7}", 400, "templateID"),
                    new Case("POST", "/e2b/v2/sandboxes", Map.of("X-API-KEY", key), "{\"templateID\": \"no-such-template\"}", 400, "template"),
                    new Case("POST", "/e2b/v2/sandboxes", Map.of("X-API-KEY", key), "{\"envVars\": {\"A\": 1}}", 400, "envVars.A"),
                    new Case("POST", "/e2b/v2/sandboxes", Map.of("X-API-KEY", key), "{\"timeout\": -5}", 400, "timeout"),
                    new Case("POST", "/e2b/v2/sandboxes", Map.of("X-API-KEY", key), "{\"mcp\": {\"github\": {}}}", 400, "mcp"),
                    new Case("POST", "/e2b/v2/sandboxes", Map.of("X-API-KEY", key), "{\"volumeMounts\": [{\"name\": 1}]}", 400, "volumeMounts"),
                    new Case("POST", "/e2b/v2/sandboxes", Map.of("X-API-KEY", key), "{\"templateID\": \"tiny\", \"volumeMounts\": "
                            + "[{\"name\": \"no-such-volume\", \"path\": \"/data\"}]}", 404, "no-such-volume"),
                    new Case("GET", "/e2b/sandboxes/sbx_0000000000000000", Map.of("X-API-KEY", key), null, 404, "sandbox"),
                    new Case("POST", "/e2b/sandboxes/sbx_0000000000000000/timeout", Map.of("X-API-KEY", key), "{}", 400, "timeout"),
                    new Case("GET", "/e2b/v2/sandboxes/sbx_0000000000000000/logs?start=-1", Map.of("X-API-KEY", key), null, 400, "start"),
                    new Case("DELETE", "/e2b/sandboxes/sbx_0000000000000000", Map.of("X-API-KEY", key), null, 404, "not found"),
                    new Case("GET", "/e2b/no/such/route", Map.of("X-API-KEY", key), null, 404, "no route"),
                    new Case("GET", "/e2b/v2/sandboxes?limit=0", Map.of("X-API-KEY", key), null, 400, "limit"),
                    new Case("GET", "/e2b/envd/files?path=/etc/hostname", Map.of("X-Access-Token", key), null, 400, "E2b-Sandbox-Id"),
                    new Case("GET", "/e2b/envd/files?path=/etc/hostname", Map.of("E2b-Sandbox-Id", "sbx_0000000000000000"), null, 401,
                            "X-Access-Token"),
                    new Case("GET", "/e2b/envd/files?path=/etc/hostname",
                            Map.of("E2b-Sandbox-Id", "sbx_0000000000000000", "X-Access-Token", key), null, 404, "sandbox"),
                    new Case("POST", "/e2b/envd/process.Process/List", Map.of("E2b-Sandbox-Id", "sbx_0000000000000000",
                            "X-Access-Token", key, "Content-Type", "application/json"), "{}", 404, "not_found"),
                    new Case("POST", "/e2b/envd/process.Process/NoSuchCall", Map.of("E2b-Sandbox-Id", "sbx_0000000000000000",
                            "X-Access-Token", key, "Content-Type", "application/json"), "{}", 501, "unimplemented"),
                    new Case("POST", "/e2b/envd/filesystem.Filesystem/Stat", Map.of("E2b-Sandbox-Id", "sbx_0000000000000000",
                            "X-Access-Token", key, "Content-Type", "application/json"), "not json", 400, "invalid_argument"),
                    new Case("GET", "/e2b/envd/process.Process/List", Map.of(), null, 501, "POST"),
                    // A streaming call's errors end its stream (HTTP 200, the error in the end message).
                    new Case("POST", "/e2b/envd/process.Process/Start", Map.of("E2b-Sandbox-Id", "sbx_0000000000000000",
                            "X-Access-Token", key, "Content-Type", "application/connect+json"), "{}", 200, "invalid_argument"));
            for (var c : cases) {
                var request = HttpRequest.newBuilder(URI.create(service.url + c.path()))
                        .method(c.method(), c.body() == null ? HttpRequest.BodyPublishers.noBody()
                                : HttpRequest.BodyPublishers.ofString(c.body()))
                        .timeout(Duration.ofSeconds(30));
                c.headers().forEach(request::header);
                var answer = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
                assertThat(answer.statusCode()).as("%s %s: %s", c.method(), c.path(), answer.body()).isEqualTo(c.status());
                assertThat(answer.body()).as("%s %s", c.method(), c.path()).containsIgnoringCase(c.says());
            }
        }
    }

    /**
     * envd's polled watchers (what the e2b Python SDK's synchronous client uses, which cannot hold a
     * stream): create one, change files, fetch the events, remove it; spoken as plain Connect calls.
     */
    @Test
    void polledWatchersReportChangesUntilRemovedAndTheSandboxHasLogs() throws Exception {
        try (var http = HttpClient.newHttpClient()) {
            service.client.volumes().create("e2b-shared", 32);
            var created = createTiny(http, ", \"envVars\": {\"STAGE\": \"it\"}, \"volumeMounts\": [{\"name\": \"e2b-shared\", \"path\": \"/shared\"}]");
            String sandbox = created.get("sandboxID").asText();
            assertThat(service.client.sandboxes().get(sandbox).exec("sh", "-c", "echo kept > /shared/f && cat /shared/f").stdout())
                    .as("a Stasis volume mounted by E2B's volumeMounts").isEqualTo("kept\n");
            var envd = Map.of("E2b-Sandbox-Id", sandbox, "X-Access-Token", created.get("envdAccessToken").asText(),
                    "Authorization", "Basic " + Base64.getEncoder().encodeToString("root:".getBytes()));
            try {
                String url = service.url + "/e2b/envd/filesystem.Filesystem/";
                String watcher = ConnectCalls.json(http, "POST", url + "CreateWatcher", envd, "{\"path\": \"/tmp\", \"recursive\": true}")
                        .get("watcherId").asText();
                service.client.sandboxes().files(sandbox).write("/tmp/seen.txt", "x");
                Await.until("the watcher's events", Duration.ofSeconds(10), () -> {
                    var events = ConnectCalls.json(http, "POST", url + "GetWatcherEvents", envd, "{\"watcherId\": \"" + watcher + "\"}");
                    return events.get("events").toString().contains("seen.txt");
                });
                assertThat(ConnectCalls.json(http, "POST", url + "RemoveWatcher", envd, "{\"watcherId\": \"" + watcher + "\"}").isEmpty()).isTrue();
                var gone = ConnectCalls.send(http, "POST", url + "GetWatcherEvents", envd, "{\"watcherId\": \"" + watcher + "\"}");
                assertThat(gone.statusCode()).isEqualTo(404);
                assertThat(gone.body()).contains("not_found");
                // Its logs: what the service saw happen to it (Stasis's events of the sandbox).
                var logs = ConnectCalls.json(http, "GET", service.url + "/e2b/v2/sandboxes/" + sandbox + "/logs?limit=10",
                        Map.of("X-API-KEY", service.rootKey), null);
                assertThat(logs.get("logs").toString()).contains("\"message\":\"lifecycle\"").contains("\"level\":\"info\"");
                var v1 = ConnectCalls.json(http, "GET", service.url + "/e2b/sandboxes/" + sandbox + "/logs", Map.of("X-API-KEY", service.rootKey), null);
                assertThat(v1.get("logs").get(0).get("line").asText()).startsWith("lifecycle");
                // envd's own HTTP calls: its environment, its metrics, the orchestrator's init.
                assertThat(ConnectCalls.json(http, "GET", service.url + "/e2b/envd/envs", envd, null).get("STAGE").asText()).isEqualTo("it");
                var metrics = ConnectCalls.json(http, "GET", service.url + "/e2b/envd/metrics", envd, null);
                assertThat(metrics.get("mem_total").asLong()).isPositive();
                assertThat(metrics.get("disk_used").asLong()).isPositive();
                assertThat(metrics.get("cpu_count").asInt()).isPositive();
                var several = ConnectCalls.json(http, "GET", service.url + "/e2b/sandboxes/metrics?sandbox_ids=" + sandbox + ",sbx_nosuchsandbox00",
                        Map.of("X-API-KEY", service.rootKey), null).get("sandboxes");
                assertThat(several.size()).as("the running ones of those named: " + several).isEqualTo(1);
                assertThat(several.get(sandbox).get("memTotal").asLong()).isPositive();
                assertThat(ConnectCalls.send(http, "GET", service.url + "/e2b/sandboxes/metrics", Map.of("X-API-KEY", service.rootKey), null).statusCode())
                        .isEqualTo(400);
                assertThat(ConnectCalls.send(http, "POST", service.url + "/e2b/envd/init", envd, "{\"timestamp\": \"2026-12-05T00:00:00Z\"}").statusCode())
                        .isEqualTo(204);
                var init = ConnectCalls.send(http, "POST", service.url + "/e2b/envd/init", envd, "{\"envVars\": {\"X\": \"1\"}}");
                assertThat(init.statusCode()).isEqualTo(400);
                assertThat(init.body()).contains("envVars");
            } finally {
                ConnectCalls.send(http, "DELETE", service.url + "/e2b/sandboxes/" + sandbox, Map.of("X-API-KEY", service.rootKey), null);
                service.client.volumes().delete("e2b-shared", false);
            }
        }
    }

    /** StreamInput, which the JavaScript SDK does not call: a Connect client stream sent as envelopes, one HTTP/1.1 request. */
    @Test
    void streamInputWritesEachMessagesInputToTheProcess() throws Exception {
        try (var http = HttpClient.newHttpClient()) {
            var created = createTiny(http, "");
            String sandbox = created.get("sandboxID").asText();
            try {
                var cat = service.client.sandboxes().processes(sandbox)
                        .start(ProcessRequest.builder("sh", "-c", "cat > /tmp/in").stdin(true).build());
                var envelopes = new ByteArrayOutputStream();
                for (String message : new String[] {"{\"start\": {\"process\": {\"pid\": " + cat.pid() + "}}}", "{\"keepalive\": {}}",
                        "{\"data\": {\"input\": {\"stdin\": \"" + b64("one\n") + "\"}}}", "{\"data\": {\"input\": {\"stdin\": \"" + b64("two\n") + "\"}}}"}) {
                    byte[] bytes = message.getBytes(StandardCharsets.UTF_8);
                    envelopes.write(ByteBuffer.allocate(5).put((byte) 0).putInt(bytes.length).array());
                    envelopes.write(bytes);
                }
                var answer = streamInput(http, sandbox, created.get("envdAccessToken").asText(), envelopes.toByteArray());
                assertThat(answer.statusCode()).isEqualTo(200);
                assertThat(answer.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t).startsWith("application/connect+json"));
                String body = new String(answer.body(), StandardCharsets.UTF_8);
                assertThat(answer.body()[0]).as("a message, then the end: " + body).isZero();
                assertThat(body).endsWith("{}").doesNotContain("error");
                cat.closeStdin();
                Await.until("the input written", Duration.ofSeconds(10),
                        () -> new String(service.client.sandboxes().files(sandbox).read("/tmp/in")).equals("one\ntwo\n"));
                byte[] dataFirst = "{\"data\": {\"input\": {\"stdin\": \"eA==\"}}}".getBytes(StandardCharsets.UTF_8);
                var refused = streamInput(http, sandbox, created.get("envdAccessToken").asText(),
                        ByteBuffer.allocate(5 + dataFirst.length).put((byte) 0).putInt(dataFirst.length).put(dataFirst).array());
                assertThat(new String(refused.body(), StandardCharsets.UTF_8)).as("input before the process is named")
                        .contains("invalid_argument").contains("start");
            } finally {
                ConnectCalls.send(http, "DELETE", service.url + "/e2b/sandboxes/" + sandbox, Map.of("X-API-KEY", service.rootKey), null);
            }
        }
    }

    private static HttpResponse<byte[]> streamInput(HttpClient http, String sandbox, String token, byte[] envelopes) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(service.url + "/e2b/envd/process.Process/StreamInput"))
                .header("Content-Type", "application/connect+json").header("E2b-Sandbox-Id", sandbox).header("X-Access-Token", token)
                .POST(HttpRequest.BodyPublishers.ofByteArray(envelopes)).build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    /** A tiny sandbox made through E2B's create, with {@code more} fields of its body ({@code , "k": v}); its E2B answer. */
    private static JsonNode createTiny(HttpClient http, String more) {
        return ConnectCalls.json(http, "POST", service.url + "/e2b/v2/sandboxes", Map.of("X-API-KEY", service.rootKey),
                "{\"templateID\": \"tiny\", \"timeout\": 120" + more + "}");
    }

    private static String b64(String text) {
        return Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8));
    }

    /** Plain HTTP calls of the E2B endpoint, JSON in and out. */
    private static final class ConnectCalls {
        static HttpResponse<String> send(HttpClient http, String method, String url, Map<String, String> headers, String body) {
            var request = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(60))
                    .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                            : HttpRequest.BodyPublishers.ofString(body))
                    .header("Content-Type", "application/json");
            headers.forEach(request::header);
            try {
                return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", e);
            }
        }

        static JsonNode json(HttpClient http, String method, String url, Map<String, String> headers, String body) {
            var answer = send(http, method, url, headers, body);
            assertThat(answer.statusCode()).as("%s %s: %s", method, url, answer.body()).isBetween(200, 201);
            try {
                return new ObjectMapper().readTree(answer.body());
            } catch (IOException e) {
                throw new AssertionError("not JSON: " + answer.body(), e);
            }
        }
    }

    @Test
    void theE2bSdkRunsCommandsFilesAndPauseAndConnectUnchanged() throws Exception {
        String secret;
        try (var root = new RawApi(service.url, service.rootKey)) {
            secret = root.post("/v1/tenants/ten_default/keys", "{\"format\": \"e2b\"}").get("secret").asText();
        }
        // base has bash and python3, as E2B's default template; its first build on a fresh machine takes minutes
        var session = NodeScripts.runSession("e2b-session", Map.of("E2B_API_URL", service.url + "/e2b",
                "E2B_SANDBOX_URL", service.url + "/e2b/envd", "E2B_API_KEY", secret, "E2B_TEMPLATE", "base", "STASIS_URL", service.url),
                Duration.ofMinutes(20));
        assertThat(session.code()).as(session.output()).isZero();
        assertThat(session.output()).contains("ok: stdout as user in its home").contains("session ok");
        assertThat(service.client.sandboxes().list().items()).isEmpty();
    }
}
