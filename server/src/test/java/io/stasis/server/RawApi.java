package io.stasis.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse.BodyHandlers;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/** Plain JSON calls to the REST API, for tests of endpoints as the wire shows them. */
final class RawApi implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final String url;
    private final String key;
    private final HttpClient http = HttpClient.newHttpClient();

    RawApi(String url, String key) {
        this.url = url;
        this.key = key;
    }

    record Response(int status, JsonNode body, Map<String, List<String>> headers) {
        Response(int status, JsonNode body) {
            this(status, body, Map.of());
        }

        /** The header's first value, if it came (names as the JDK's client keeps them: lower case). */
        Optional<String> header(String name) {
            return headers.getOrDefault(name.toLowerCase(Locale.ROOT), List.of()).stream().findFirst();
        }

        JsonNode ok() {
            if (status >= 300) throw new AssertionError("HTTP " + status + ": " + body);
            return body;
        }

        String errorCode() {
            return body.path("error").path("code").asText();
        }
    }

    Response call(String method, String path, String jsonBody) {
        try {
            var builder = HttpRequest.newBuilder(URI.create(url + path)).header("Authorization", "Bearer " + key)
                    .method(method, jsonBody == null ? BodyPublishers.noBody() : BodyPublishers.ofString(jsonBody));
            if (jsonBody != null) builder.header("Content-Type", "application/json");
            var response = http.send(builder.build(), BodyHandlers.ofString());
            String text = response.body();
            boolean json = response.headers().firstValue("Content-Type").orElse("").startsWith("application/json");
            return new Response(response.statusCode(), text.isEmpty() || !json ? JSON.getNodeFactory().textNode(text) : JSON.readTree(text),
                    response.headers().map());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    JsonNode post(String path, String body) {
        return call("POST", path, body).ok();
    }

    JsonNode get(String path) {
        return call("GET", path, null).ok();
    }

    /** Brings a running sandbox to {@code state} (running, paused, standby, hibernated or stopped) through the API. */
    void bringTo(String id, String state) {
        switch (state) {
            case "running" -> { }
            case "paused" -> post("/v1/sandboxes/" + id + "/pause", null);
            case "standby" -> post("/v1/sandboxes/" + id + "/standby", null);
            case "hibernated" -> post("/v1/sandboxes/" + id + "/hibernate", null);
            case "stopped" -> post("/v1/sandboxes/" + id + "/stop", null);
            default -> throw new IllegalArgumentException(state);
        }
    }

    /** Writes {@code text} to a background process's stdin, which must answer 200. */
    void processStdin(String sandbox, long pid, String text) {
        var written = call("POST", "/v1/sandboxes/" + sandbox + "/processes/" + pid + "/stdin", text);
        if (written.status() != 200) throw new AssertionError("stdin of " + pid + ": HTTP " + written.status() + ": " + written.body());
    }

    /** What a background process has written to its stdout so far. */
    String processStdout(String sandbox, long pid) {
        return get("/v1/sandboxes/" + sandbox + "/processes/" + pid + "/output").get("stdout").asText();
    }

    /** Runs {@code sh -c script} and returns its stdout. */
    String sh(String sandbox, String script) {
        var body = JSON.createObjectNode();
        body.putArray("cmd").add("sh").add("-c").add(script);
        var result = post("/v1/sandboxes/" + sandbox + "/exec", body.toString());
        if (result.get("exitCode").asInt() != 0) throw new AssertionError("exit " + result.get("exitCode") + ": " + result.get("stderr").asText());
        return result.get("stdout").asText();
    }

    @Override
    public void close() {
        http.close();
    }
}
