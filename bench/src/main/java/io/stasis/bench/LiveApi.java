package io.stasis.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The live-state and background process calls of the REST API (pause, resume, hibernate,
 * checkpoints, forks; start a process, write to its stdin, forget it) as plain JSON over HTTP, so the benchmark does not depend on SDK methods still being written. The HTTP
 * client is set up as the SDK sets up its own (HTTP/1.1, the client's steps on the calling
 * thread), so a call costs what it would cost through the SDK.
 */
final class LiveApi implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final String baseUrl;
    private final String apiKey;
    private final Duration requestTimeout;
    private final HttpClient http;

    LiveApi(String baseUrl, String apiKey, Duration requestTimeout) {
        this.baseUrl = baseUrl;
        this.apiKey = apiKey;
        this.requestTimeout = requestTimeout;
        this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(10))
                .followRedirects(HttpClient.Redirect.NEVER).executor(Runnable::run).build();
    }

    /** {@code GET /v1/sandboxes/{id}}: what every call pays (HTTP, authentication, a catalog read) and no more. */
    JsonNode get(String sandboxId) {
        return send(HttpRequest.newBuilder(uri("/v1/sandboxes/" + sandboxId)).GET(), "GET /v1/sandboxes/" + sandboxId, 200);
    }

    /** {@code POST /v1/sandboxes/{id}/pause}; returns the sandbox in its new state. */
    JsonNode pause(String sandboxId) {
        return expectState(post("/v1/sandboxes/" + sandboxId + "/pause", null, 200), "paused");
    }

    /** {@code POST /v1/sandboxes/{id}/standby}; returns once frozen (the memory goes out in the background). */
    JsonNode standby(String sandboxId) {
        return expectState(post("/v1/sandboxes/" + sandboxId + "/standby", null, 200), "standby");
    }

    /** {@code POST /v1/sandboxes/{id}/resume}, from paused, standby or hibernated. */
    JsonNode resume(String sandboxId) {
        return expectState(post("/v1/sandboxes/" + sandboxId + "/resume", null, 200), "running");
    }

    /** {@code POST /v1/sandboxes/{id}/hibernate}; the result's {@code hibernation.imageBytes} is the image size. */
    JsonNode hibernate(String sandboxId) {
        return expectState(post("/v1/sandboxes/" + sandboxId + "/hibernate", null, 200), "hibernated");
    }

    /** {@code POST /v1/sandboxes/{id}/checkpoints}; returns the checkpoint object. */
    JsonNode checkpoint(String sandboxId, boolean memory) {
        ObjectNode body = JSON.createObjectNode().put("memory", memory);
        return post("/v1/sandboxes/" + sandboxId + "/checkpoints", body, 201);
    }

    /** {@code POST /v1/sandboxes/{id}/checkpoints} with memory, keeping {@code spares} forks of it restored ahead. */
    JsonNode checkpointWithSpares(String sandboxId, int spares) {
        ObjectNode body = JSON.createObjectNode().put("memory", true).put("spares", spares);
        return post("/v1/sandboxes/" + sandboxId + "/checkpoints", body, 201);
    }

    /** {@code GET /v1/checkpoints/{cid}}. */
    JsonNode getCheckpoint(String checkpointId) {
        return send(HttpRequest.newBuilder(uri("/v1/checkpoints/" + checkpointId)).GET(), "GET /v1/checkpoints/" + checkpointId, 200);
    }

    /** {@code DELETE /v1/checkpoints/{cid}}. */
    void deleteCheckpoint(String checkpointId) {
        send(HttpRequest.newBuilder(uri("/v1/checkpoints/" + checkpointId)).DELETE(), "DELETE /v1/checkpoints/" + checkpointId, 204);
    }

    /** {@code POST /v1/sandboxes/{id}/fork} of {@code count} from a checkpoint; returns the new sandboxes' ids. */
    List<String> fork(String sandboxId, String checkpointId, int count) {
        ObjectNode body = JSON.createObjectNode().put("checkpoint", checkpointId).put("count", count);
        JsonNode created = post("/v1/sandboxes/" + sandboxId + "/fork", body, 201);
        var ids = new ArrayList<String>();
        created.path("items").forEach(s -> ids.add(s.path("id").asText()));
        if (ids.size() != count) throw new IllegalStateException("fork of " + count + " returned " + ids.size() + " sandboxes: " + created);
        return ids;
    }

    /**
     * {@code POST /v1/sandboxes/{id}/processes} of {@code sh -c script} in the background; returns
     * its pid as the sandbox sees it.
     *
     * @param stdin whether its standard input stays open for {@link #writeStdin}
     */
    long startProcess(String sandboxId, String script, boolean stdin) {
        ObjectNode body = JSON.createObjectNode().put("stdin", stdin).put("tag", "bench");
        body.putArray("cmd").add("sh").add("-c").add(script);
        JsonNode process = post("/v1/sandboxes/" + sandboxId + "/processes", body, 201);
        long pid = process.path("pid").asLong(-1);
        if (pid < 1) throw new IllegalStateException("the started process has no pid: " + process);
        return pid;
    }

    /** {@code POST .../processes/{pid}/stdin} of raw bytes; returns once they are in its input. */
    void writeStdin(String sandboxId, long pid, byte[] data) {
        String path = "/v1/sandboxes/" + sandboxId + "/processes/" + pid + "/stdin";
        send(HttpRequest.newBuilder(uri(path)).header("Content-Type", "application/octet-stream")
                .POST(HttpRequest.BodyPublishers.ofByteArray(data)), "POST " + path, 200);
    }

    /** {@code POST .../processes/{pid}/signal}, e.g. {@code KILL}; a process that has already ended is left alone. */
    void signalProcess(String sandboxId, long pid, String signal) {
        String path = "/v1/sandboxes/" + sandboxId + "/processes/" + pid + "/signal";
        var request = HttpRequest.newBuilder(uri(path)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(JSON.createObjectNode().put("signal", signal).toString(), StandardCharsets.UTF_8));
        try {
            send(request, "POST " + path, 200);
        } catch (IllegalStateException e) {
            if (e.getMessage() == null || !e.getMessage().contains(" answered 409 ")) throw e;
        }
    }

    /** {@code GET .../processes/{pid}/wait}: the process once it has ended, or as it is after {@code timeoutMs}. */
    JsonNode waitProcess(String sandboxId, long pid, long timeoutMs) {
        String path = "/v1/sandboxes/" + sandboxId + "/processes/" + pid + "/wait?timeoutMs=" + timeoutMs;
        return send(HttpRequest.newBuilder(uri(path)).GET(), "GET " + path, 200);
    }

    /** {@code DELETE .../processes/{pid}}: forgets an ended process and removes its output. */
    void forgetProcess(String sandboxId, long pid) {
        String path = "/v1/sandboxes/" + sandboxId + "/processes/" + pid;
        send(HttpRequest.newBuilder(uri(path)).DELETE(), "DELETE " + path, 204);
    }

    /** Event streams on the same service, spread over {@code clients} HTTP clients; close them after use. */
    EventStreams eventStreams(int clients) {
        return new EventStreams(baseUrl, apiKey, clients);
    }

    private JsonNode post(String path, JsonNode body, int expected) {
        var request = HttpRequest.newBuilder(uri(path)).header("Content-Type", "application/json")
                .POST(body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body.toString(), StandardCharsets.UTF_8));
        return send(request, "POST " + path, expected);
    }

    private JsonNode send(HttpRequest.Builder request, String what, int expected) {
        HttpResponse<byte[]> response;
        try {
            response = http.send(request.header("Authorization", "Bearer " + apiKey).header("Accept", "application/json")
                    .timeout(requestTimeout).build(), HttpResponse.BodyHandlers.ofByteArray());
        } catch (IOException e) {
            throw new IllegalStateException(what + " failed: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(what + " interrupted", e);
        }
        String text = new String(response.body(), StandardCharsets.UTF_8);
        if (response.statusCode() != expected)
            throw new IllegalStateException(what + " answered " + response.statusCode() + " (expected " + expected + "): " + text);
        if (text.isEmpty()) return JSON.createObjectNode();
        try {
            return JSON.readTree(text);
        } catch (IOException e) {
            throw new IllegalStateException(what + " answered something that is not JSON: " + text, e);
        }
    }

    private static JsonNode expectState(JsonNode sandbox, String state) {
        if (!sandbox.path("state").asText().equals(state))
            throw new IllegalStateException("expected the sandbox " + state + ", the service answered " + sandbox);
        return sandbox;
    }

    private URI uri(String path) {
        return URI.create(baseUrl + path);
    }

    @Override
    public void close() {
        http.close();
    }
}
