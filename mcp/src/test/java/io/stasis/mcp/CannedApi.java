package io.stasis.mcp;

import com.sun.net.httpserver.HttpServer;
import io.stasis.sdk.StasisClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The REST API as documented answers, canned per "METHOD /path": the tools' handlers call it
 * through the real SDK. Unknown routes answer the API's 404 envelope.
 */
final class CannedApi implements AutoCloseable {
    record Answer(int status, String contentType, byte[] body) {
    }

    record Call(String method, String path, String query, byte[] body) {
        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    private final HttpServer server;
    private final Map<String, Answer> answers = new ConcurrentHashMap<>();
    final List<Call> calls = new CopyOnWriteArrayList<>();
    final StasisClient client;

    CannedApi() {
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        server.createContext("/", exchange -> {
            try (exchange) {
                var uri = exchange.getRequestURI();
                calls.add(new Call(exchange.getRequestMethod(), uri.getRawPath(), uri.getRawQuery(),
                        exchange.getRequestBody().readAllBytes()));
                Answer answer = answers.getOrDefault(exchange.getRequestMethod() + " " + uri.getRawPath(),
                        new Answer(404, "application/json", error("not_found", "no route").getBytes(StandardCharsets.UTF_8)));
                exchange.getResponseHeaders().set("Content-Type", answer.contentType());
                exchange.sendResponseHeaders(answer.status(), answer.status() == 204 ? -1 : answer.body().length);
                if (answer.status() != 204) exchange.getResponseBody().write(answer.body());
            }
        });
        server.start();
        client = StasisClient.builder().url("http://127.0.0.1:" + server.getAddress().getPort()).apiKey("sk_test")
                .requestTimeout(Duration.ofSeconds(5)).build();
    }

    CannedApi json(String route, int status, String body) {
        answers.put(route, new Answer(status, "application/json", body.getBytes(StandardCharsets.UTF_8)));
        return this;
    }

    CannedApi bytes(String route, byte[] body) {
        answers.put(route, new Answer(200, "application/octet-stream", body));
        return this;
    }

    Call last() {
        return calls.getLast();
    }

    static String error(String code, String message) {
        return "{\"error\": {\"code\": \"" + code + "\", \"message\": \"" + message + "\", \"details\": {}}}";
    }

    @Override
    public void close() {
        client.close();
        server.stop(0);
    }
}
