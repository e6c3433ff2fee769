package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.stasis.server.auth.Access;
import io.stasis.server.http.HttpApi;
import io.stasis.server.http.OpenApiSpec;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * openapi.yaml against the running service: its operations are exactly the routes the service
 * registers, it is served without a key, and real answers (successes and errors) match the
 * schemas it gives for their operation and status.
 */
@Tag("root")
class OpenApiIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final OpenApiSpec SPEC = OpenApiSpec.load();
    private static ServiceFixture service;
    private static HttpClient http;

    @BeforeAll
    static void start() throws IOException {
        service = ServiceFixture.start(); // the fixture listens for previews on a free port
        http = HttpClient.newHttpClient();
    }

    @AfterAll
    static void stop() {
        if (http != null) http.close();
        if (service != null) service.close();
    }

    @Test
    void theSpecDescribesExactlyTheRoutesTheServiceRegisters() {
        var registered = new TreeSet<String>();
        var servletPaths = new TreeSet<String>(); // a servlet takes every method: the spec says which it answers
        for (var route : service.daemon.routes()) {
            String path = OpenApiSpec.normalize(route.path());
            if (route.method().equals(HttpApi.Route.ANY_METHOD)) servletPaths.add(path);
            else registered.add(route.method() + " " + path);
        }
        var documented = SPEC.operations();

        var undocumented = new TreeSet<>(registered);
        undocumented.removeAll(documented);
        for (String path : servletPaths)
            if (documented.stream().noneMatch(op -> op.endsWith(" " + path))) undocumented.add("(any method) " + path);
        var unregistered = new TreeSet<>(documented);
        unregistered.removeAll(registered);
        unregistered.removeIf(op -> servletPaths.contains(op.substring(op.indexOf(' ') + 1)));
        assertThat(undocumented).as("routes the service registers that openapi.yaml does not describe").isEmpty();
        assertThat(unregistered).as("operations openapi.yaml describes that the service does not register").isEmpty();
        assertThat(registered).as("the walk sees HTTP and WebSocket routes").contains("POST /v1/sandboxes", "GET /v1/sandboxes/{}/terminal");
    }

    @Test
    void everyRouteDeclaresOneAccessRule() {
        var undeclared = new TreeSet<String>();
        for (var route : service.daemon.routes()) {
            if (!route.path().startsWith("/v1/")) continue;
            if (route.roles().size() != 1 || !(route.roles().iterator().next() instanceof Access))
                undeclared.add(route.method() + " " + route.path() + " " + route.roles());
        }
        assertThat(undeclared).as("/v1 routes without exactly one Access (the guard refuses them to everyone)").isEmpty();
    }

    @Test
    void theSpecIsServedWithoutAKeyAndEverythingElseUnderV1NeedsOne() throws Exception {
        var spec = send("GET", "/v1/openapi.yaml", null, null, null);
        assertThat(spec.statusCode()).isEqualTo(200);
        assertThat(spec.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t).startsWith("application/yaml"));
        assertThat(spec.body()).isEqualTo(SPEC.yaml());

        for (String path : new String[]{"/v1/sandboxes", "/v1/secrets", "/v1/templates"})
            expect(401, send("GET", path, null, null, null));
        expect(401, send("POST", "/mcp", "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"}", "application/json", null));
        expect(200, send("GET", "/healthz", null, null, null));
    }

    @Test
    void answersMatchTheSchemasOfTheirOperations() throws Exception {
        String id = expect(201, call("POST", "/v1/sandboxes", "{\"name\": \"spec\", \"metadata\": {\"team\": \"docs\"}, \"env\": {\"A\": \"1\"}}"))
                .get("id").asText();
        String sbx = "/v1/sandboxes/spec";
        expect(200, call("GET", sbx, null));
        expect(200, call("GET", "/v1/sandboxes?metadata.team=docs&limit=10", null));
        expect(200, call("GET", "/v1/templates", null));
        expect(200, call("PATCH", sbx + "/lifecycle", "{\"pauseAfterIdle\": \"1m\", \"stopAfterIdle\": null}"));
        var metrics = expect(200, call("GET", sbx + "/metrics", null));
        assertThat(metrics.get("memoryBytes").asLong()).isPositive();
        assertThat(metrics.get("memoryLimitBytes").asLong()).isPositive();
        assertThat(metrics.get("diskLimitBytes").asLong()).isPositive();
        assertThat(metrics.get("diskBytes").asLong()).isPositive(); // what the sandbox's start wrote in its root, at least

        expect(200, call("POST", sbx + "/exec", "{\"cmd\": [\"sh\", \"-c\", \"echo out; echo err >&2\"]}"));
        expect(200, call("POST", sbx + "/exec", "{\"cmd\": [\"sh\", \"-c\", \"kill -9 $$\"], \"encoding\": \"base64\"}"));

        var process = expect(201, call("POST", sbx + "/processes", "{\"cmd\": [\"sh\", \"-c\", \"echo ready; cat\"], \"tag\": \"spec\", \"stdin\": true}"));
        String proc = sbx + "/processes/" + process.get("pid").asLong();
        expect(200, call("GET", sbx + "/processes", null));
        expect(200, send("POST", proc + "/stdin", "typed\n", "application/octet-stream", service.rootKey));
        expect(200, call("GET", proc + "/output?offset=0&stderrOffset=0", null));
        expect(200, call("POST", proc + "/stdin/close", null));
        expect(200, call("GET", proc + "/wait?timeoutMs=20000", null));
        expect(200, call("GET", proc, null));
        expect(409, call("POST", proc + "/signal", "{\"signal\": \"TERM\"}"));
        expect(204, call("DELETE", proc, null));
        var sleeper = expect(201, call("POST", sbx + "/processes", "{\"cmd\": [\"sleep\", \"60\"], \"keepAlive\": true, \"keepAliveFor\": \"1m\"}"));
        expect(200, call("POST", sbx + "/processes/" + sleeper.get("pid").asLong() + "/signal", "{\"signal\": \"KILL\"}"));

        expect(200, send("PUT", sbx + "/files?path=/root/a.txt&mode=0600", "hello", "application/octet-stream", service.rootKey));
        expect(201, call("POST", sbx + "/files/mkdir?path=/root/dir", null));
        expect(200, call("POST", sbx + "/files/mkdir?path=/root/dir", null));
        expect(200, call("POST", sbx + "/files/move", "{\"from\": \"/root/a.txt\", \"to\": \"/root/dir/b.txt\"}"));
        expect(200, call("GET", sbx + "/files/list?path=/root/dir", null));
        expect(200, call("GET", sbx + "/files/stat?path=/root/dir/b.txt", null));
        expect(200, call("GET", sbx + "/files/list?path=/&limit=2", null));

        String checkpoint = expect(201, call("POST", sbx + "/checkpoints", "{\"name\": \"files\", \"memory\": false}")).get("id").asText();
        expect(200, call("GET", sbx + "/checkpoints", null));
        expect(200, call("GET", "/v1/checkpoints/" + checkpoint, null));
        expect(200, call("POST", "/v1/checkpoints/" + checkpoint + "/sync?timeout=2m", null));
        String durable = expect(201, call("POST", sbx + "/checkpoints", "{\"name\": \"kept\", \"memory\": false, \"durable\": true}")).get("id").asText();
        expect(200, call("GET", "/v1/checkpoints", null));
        expect(200, call("GET", "/v1/checkpoints?source=store", null));
        expect(201, call("POST", "/v1/sandboxes", "{\"fromCheckpoint\": \"" + durable + "\", \"name\": \"spec-restored\"}"));
        expect(201, call("POST", sbx + "/fork", "{\"checkpoint\": \"" + checkpoint + "\", \"name\": \"spec-fork\"}"));
        expect(200, call("GET", sbx + "/forks", null));

        expect(200, call("GET", sbx + "/network", null));
        expect(200, call("PUT", sbx + "/network", "{\"egress\": {\"default\": \"deny\", \"allow\": [\"example.com\", \"192.0.2.7\"]}}"));

        var preview = expect(201, call("POST", sbx + "/previews", "{\"port\": 3000, \"ttlSeconds\": 600}"));
        assertThat(preview.has("token")).as("a private preview's create holds its token").isTrue();
        expect(201, call("POST", sbx + "/previews", "{\"port\": 3001, \"public\": true}"));
        expect(200, call("GET", sbx + "/previews", null));
        expect(200, call("GET", sbx + "/previews/" + preview.get("id").asText(), null));

        expect(201, call("POST", "/v1/secrets", "{\"name\": \"SPEC_TOKEN\", \"value\": \"one\"}"));
        expect(200, call("POST", "/v1/secrets", "{\"name\": \"SPEC_TOKEN\", \"value\": \"two\"}"));
        expect(200, call("GET", "/v1/secrets", null));
        expect(204, call("DELETE", "/v1/secrets/SPEC_TOKEN", null));

        expect(200, call("POST", sbx + "/pause", null));
        expect(200, call("POST", sbx + "/hibernate", null));
        expect(200, call("POST", sbx + "/resume", null));
        expect(200, call("POST", sbx + "/stop", null));
        expect(200, call("POST", sbx + "/start", null));

        expect(200, call("GET", "/v1/events?limit=50", null));
        expect(200, call("GET", "/v1/sandboxes/" + id + "/events?after=0", null));
    }

    @Test
    void errorsMatchTheSchemaOfTheirStatus() throws Exception {
        expect(201, call("POST", "/v1/sandboxes", "{\"name\": \"spec-errors\"}"));
        String sbx = "/v1/sandboxes/spec-errors";
        expect(200, send("PUT", sbx + "/files?path=/root/file", "x", "application/octet-stream", service.rootKey));
        expect(400, call("POST", "/v1/sandboxes", "{not json"));
        expect(400, call("GET", "/v1/sandboxes?limit=many", null));
        expect(404, call("GET", "/v1/sandboxes/no-such-sandbox", null));
        expect(404, call("GET", sbx + "/processes/99999", null));
        expect(404, call("GET", sbx + "/files/stat?path=/no/such/file", null));
        expect(404, call("GET", "/v1/checkpoints/ckpt_0000000000000000", null));
        expect(404, call("POST", "/v1/sandboxes", "{\"fromCheckpoint\": \"ckpt_0000000000000000\"}"));
        expect(422, call("GET", "/v1/checkpoints?source=elsewhere", null));
        expect(422, call("POST", "/v1/sandboxes", "{\"fromCheckpoint\": \"ckpt_0000000000000000\", \"template\": \"tiny\"}"));
        expect(404, call("DELETE", "/v1/secrets/NO_SUCH_SECRET", null));
        expect(409, call("POST", "/v1/sandboxes", "{\"name\": \"spec-errors\"}"));
        expect(409, call("POST", sbx + "/files/mkdir?path=/root/file", null));
        expect(422, call("POST", "/v1/sandboxes", "{\"nmae\": \"typo\"}"));
        expect(422, call("POST", "/v1/sandboxes", "{\"template\": \"no-such-template\"}"));
        expect(422, call("POST", sbx + "/exec", "{}"));
        expect(422, call("GET", sbx + "/files/list?path=/root/file", null));
        expect(422, call("POST", sbx + "/previews", "{\"port\": 70000}"));
        expect(422, call("PUT", sbx + "/network", "{\"egress\": {\"allow\": [\"not a domain!\"]}}"));
    }

    private static HttpResponse<String> call(String method, String path, String json) throws IOException, InterruptedException {
        return send(method, path, json, json == null ? null : "application/json", service.rootKey);
    }

    private static HttpResponse<String> send(String method, String path, String body, String contentType, String key)
            throws IOException, InterruptedException {
        var builder = HttpRequest.newBuilder(URI.create(service.url + path))
                .method(method, body == null ? BodyPublishers.noBody() : BodyPublishers.ofString(body));
        if (key != null) builder.header("Authorization", "Bearer " + key);
        if (contentType != null) builder.header("Content-Type", contentType);
        return http.send(builder.build(), BodyHandlers.ofString());
    }

    /** Checks the status, then the body against the spec's schema for the operation and status; returns the body. */
    private static JsonNode expect(int status, HttpResponse<String> response) throws IOException {
        String method = response.request().method();
        String path = response.request().uri().getRawPath();
        assertThat(response.statusCode()).as(method + " " + response.request().uri() + ": " + response.body()).isEqualTo(status);
        if (status == 204) {
            assertThat(response.body()).isEmpty();
            return JSON.nullNode();
        }
        SPEC.validate(method, path, status, response.body());
        return JSON.readTree(response.body());
    }
}
