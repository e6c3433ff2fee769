package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Every user mistake gets a clear, structured error with the right status; none is a 500. */
@Tag("root")
class ApiErrorsIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static ServiceFixture service;
    private static HttpClient http;
    private static String sandbox;

    @BeforeAll
    static void start() throws Exception {
        service = ServiceFixture.start("--max-upload", "1M");
        http = HttpClient.newHttpClient();
        sandbox = JSON.readTree(call("POST", "/v1/sandboxes", "{\"name\": \"errors\"}").body()).get("id").asText();
        call("POST", "/v1/sandboxes/errors/exec", "{\"cmd\": [\"sh\", \"-c\", \"mkdir -p /root/dir/sub; echo x > /root/file; echo y > /root/other\"]}");
    }

    @AfterAll
    static void stop() {
        http.close();
        service.close();
    }

    private static HttpResponse<String> call(String method, String path, String body) throws IOException, InterruptedException {
        return call(method, path, body, "Bearer " + service.rootKey);
    }

    private static HttpResponse<String> call(String method, String path, String body, String auth) throws IOException, InterruptedException {
        var builder = HttpRequest.newBuilder(URI.create(service.url + path))
                .method(method, body == null ? BodyPublishers.noBody() : BodyPublishers.ofString(body));
        if (auth != null) builder.header("Authorization", auth);
        if (body != null) builder.header("Content-Type", "application/json");
        return http.send(builder.build(), BodyHandlers.ofString());
    }

    private static void expect(HttpResponse<String> response, int status, String code) throws IOException {
        assertThat(response.statusCode()).as(response.request().method() + " " + response.request().uri() + ": " + response.body()).isEqualTo(status);
        assertThat(response.headers().firstValue("X-Request-Id")).isPresent();
        JsonNode error = JSON.readTree(response.body()).get("error");
        assertThat(error).as("error envelope in " + response.body()).isNotNull();
        assertThat(error.get("code").asText()).isEqualTo(code);
        assertThat(error.get("message").asText()).isNotBlank();
    }

    @Test
    void authentication() throws Exception {
        expect(call("GET", "/v1/sandboxes", null, null), 401, "unauthenticated");
        expect(call("GET", "/v1/sandboxes", null, "Bearer sk_wrong"), 401, "unauthenticated");
        expect(call("GET", "/v1/sandboxes", null, "Basic abc"), 401, "unauthenticated");
        expect(call("GET", "/v1/nothing-here", null, null), 401, "unauthenticated");
        assertThat(call("GET", "/healthz", null, null).statusCode()).isEqualTo(200);
        expect(call("GET", "/metrics", null, null), 401, "unauthenticated");
        String tenant = JSON.readTree(call("POST", "/v1/tenants", "{\"name\": \"metrics-reader\"}").body()).get("id").asText();
        String key = JSON.readTree(call("POST", "/v1/tenants/" + tenant + "/keys", "{}").body()).get("secret").asText();
        assertThat(call("GET", "/v1/sandboxes", null, "Bearer " + key).statusCode()).isEqualTo(200);
        expect(call("GET", "/metrics", null, "Bearer " + key), 403, "forbidden");
        var metrics = call("GET", "/metrics", null);
        assertThat(metrics.statusCode()).isEqualTo(200);
        assertThat(metrics.body()).contains("stasis_sandboxes").contains("stasis_http_requests")
                .contains("stasis_tenant_requests_total{outcome=\"ok\",tenant=\"" + tenant + "\"}")
                .contains("stasis_tenant_sandboxes{");
    }

    @Test
    void unknownThings() throws Exception {
        expect(call("GET", "/v1/nothing-here", null), 404, "not_found");
        expect(call("GET", "/v1/sandboxes/sbx_0000000000000000", null), 404, "sandbox_not_found");
        expect(call("GET", "/v1/sandboxes/no-such-name", null), 404, "sandbox_not_found");
        expect(call("DELETE", "/v1/sandboxes/no-such-name", null), 404, "sandbox_not_found");
        expect(call("POST", "/v1/sandboxes/no-such-name/exec", "{\"cmd\": [\"true\"]}"), 404, "sandbox_not_found");
        expect(call("GET", "/v1/sandboxes/no-such-name/files?path=/etc/passwd", null), 404, "sandbox_not_found");
    }

    @Test
    void badCreateBodies() throws Exception {
        expect(call("POST", "/v1/sandboxes", "{"), 400, "malformed_request");
        expect(call("POST", "/v1/sandboxes", "[1,2]"), 422, "invalid_request");
        expect(call("POST", "/v1/sandboxes", "{\"templat\": \"tiny\"}"), 422, "invalid_request");
        expect(call("POST", "/v1/sandboxes", "{\"template\": 5}"), 422, "invalid_request");
        expect(call("POST", "/v1/sandboxes", "{\"name\": true}"), 422, "invalid_request");
        expect(call("POST", "/v1/sandboxes", "{\"resources\": {\"pids\": \"64\"}}"), 422, "invalid_request");
        expect(call("POST", "/v1/sandboxes", "{\"resources\": {\"pids\": 64.5}}"), 422, "invalid_request");
        expect(call("POST", "/v1/sandboxes", "{\"template\": \"no-such-template\"}"), 422, "template_not_found");
        expect(call("POST", "/v1/sandboxes", "{\"name\": \"Not A Name\"}"), 422, "invalid_request");
        expect(call("POST", "/v1/sandboxes", "{\"name\": \"sbx_looks_like_an_id\"}"), 422, "invalid_request");
        expect(call("POST", "/v1/sandboxes", "{\"name\": \"errors\"}"), 409, "name_taken");
        expect(call("POST", "/v1/sandboxes", "{\"resources\": {\"cpus\": \"many\"}}"), 422, "invalid_request");
        expect(call("POST", "/v1/sandboxes", "{\"resources\": {\"memoryMb\": 1}}"), 422, "invalid_request");
        expect(call("POST", "/v1/sandboxes", "{\"resources\": {\"pids\": 0}}"), 422, "invalid_request");
        expect(call("POST", "/v1/sandboxes", "{\"resources\": {\"disk\": 1}}"), 422, "invalid_request");
        expect(call("POST", "/v1/sandboxes", "{\"env\": {\"1BAD\": \"x\"}}"), 422, "invalid_request");
        expect(call("POST", "/v1/sandboxes", "{\"env\": {\"OK\": 1}}"), 422, "invalid_request");
        expect(call("POST", "/v1/sandboxes", "{\"metadata\": {\"k\": null}}"), 422, "invalid_request");
    }

    @Test
    void badListQueries() throws Exception {
        expect(call("GET", "/v1/sandboxes?limit=0", null), 422, "invalid_request");
        expect(call("GET", "/v1/sandboxes?limit=abc", null), 400, "malformed_request");
        expect(call("GET", "/v1/sandboxes?state=dancing", null), 422, "invalid_request");
        expect(call("GET", "/v1/sandboxes?cursor=not-a-cursor", null), 422, "invalid_request");
    }

    @Test
    void badExecRequests() throws Exception {
        String exec = "/v1/sandboxes/" + sandbox + "/exec";
        expect(call("POST", exec, "{}"), 422, "invalid_request");
        expect(call("POST", exec, "{\"cmd\": []}"), 422, "invalid_request");
        expect(call("POST", exec, "{\"cmd\": \"ls -l\"}"), 422, "invalid_request");
        expect(call("POST", exec, "{\"cmd\": [\"\"]}"), 422, "invalid_request");
        expect(call("POST", exec, "{\"cmd\": [\"true\"], \"cwd\": \"/no/such/dir\"}"), 422, "invalid_request");
        expect(call("POST", exec, "{\"cmd\": [\"true\"], \"cwd\": \"relative\"}"), 422, "invalid_request");
        expect(call("POST", exec, "{\"cmd\": [\"true\"], \"timeoutMs\": -5}"), 422, "invalid_request");
        expect(call("POST", exec, "{\"cmd\": [\"true\"], \"encoding\": \"latin1\"}"), 422, "invalid_request");
        expect(call("POST", exec, "{\"cmd\": [\"true\"], \"stdin\": \"!!\", \"stdinEncoding\": \"base64\"}"), 422, "invalid_request");
        expect(call("POST", exec, "{\"cmd\": [\"true\"], \"env\": {\"A=B\": \"x\"}}"), 422, "invalid_request");
        var notFound = call("POST", exec, "{\"cmd\": [\"no-such-program\"]}");
        assertThat(notFound.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(notFound.body()).get("exitCode").asInt()).isEqualTo(127);
    }

    @Test
    void badFileRequests() throws Exception {
        String files = "/v1/sandboxes/" + sandbox + "/files";
        expect(call("GET", files + "?path=/root/missing", null), 404, "file_not_found");
        expect(call("GET", files, null), 422, "invalid_request");
        expect(call("GET", files + "?path=/root/dir", null), 422, "is_a_directory");
        expect(call("GET", files + "/list?path=/root/file", null), 422, "not_a_directory");
        expect(call("GET", files + "/list?path=/root/missing", null), 404, "file_not_found");
        expect(call("GET", files + "/stat?path=/root/missing", null), 404, "file_not_found");
        expect(call("POST", files + "/mkdir?path=/root/file", null), 409, "file_exists");
        expect(call("POST", files + "/mkdir?path=/root/file/below", null), 409, "file_exists");
        expect(call("DELETE", files + "?path=/root/dir", null), 409, "directory_not_empty");
        expect(call("DELETE", files + "?path=/", null), 422, "invalid_request");
        expect(call("DELETE", files + "?path=/root/missing", null), 404, "file_not_found");
        expect(call("DELETE", files + "?path=/root/dir&recursive=maybe", null), 400, "malformed_request");
        expect(call("POST", files + "/move", "{\"from\": \"/root/file\", \"to\": \"/root/other\"}"), 409, "file_exists");
        expect(call("POST", files + "/move", "{\"from\": \"/root/missing\", \"to\": \"/root/x\"}"), 404, "file_not_found");
        expect(call("POST", files + "/move", "{\"from\": \"/root/file\"}"), 422, "invalid_request");
        expect(call("PUT", files + "?path=/root/new&mode=999", "x"), 422, "invalid_request");
        expect(call("PUT", files + "?path=/root/dir", "x"), 422, "is_a_directory");
        expect(call("PUT", files + "?path=/root/big", "x".repeat(2 << 20)), 413, "payload_too_large");
        expect(call("GET", files + "/list?path=/root&limit=0", null), 422, "invalid_request");
        // The root's /proc, /sys and /dev lie under the sandbox's kernel mounts: a write there would never be seen.
        expect(call("PUT", files + "?path=/proc/self/root/tmp/x", "x"), 422, "invalid_request");
        expect(call("PUT", files + "?path=/sys/x", "x"), 422, "invalid_request");
        expect(call("POST", files + "/mkdir?path=/dev/made", null), 422, "invalid_request");
        expect(call("GET", files + "/list?path=/root/../proc", null), 422, "invalid_request");
        assertThat(call("GET", files + "/stat?path=/root/big", null).statusCode()).isEqualTo(404);
        assertThat(call("GET", files + "?path=/root/file", null).body()).isEqualTo("x\n");
    }

    @Test
    void idempotentMkdirAndCreatedStatuses() throws Exception {
        String files = "/v1/sandboxes/" + sandbox + "/files";
        assertThat(call("POST", files + "/mkdir?path=/root/made", null).statusCode()).isEqualTo(201);
        assertThat(call("POST", files + "/mkdir?path=/root/made", null).statusCode()).isEqualTo(200);
        assertThat(call("PUT", files + "?path=/root/made/f", "content").statusCode()).isEqualTo(200);
        assertThat(call("DELETE", files + "?path=/root/made&recursive=true", null).statusCode()).isEqualTo(204);
    }
}
