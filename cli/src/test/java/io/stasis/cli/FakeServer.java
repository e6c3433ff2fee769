package io.stasis.cli;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;

/** A loopback server replaying documented API responses for the CLI tests. */
final class FakeServer implements AutoCloseable {
    record Request(String method, String path, String query, String authorization, String accept, byte[] body) {
        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }

        /** Decoded query parameters (last value wins). */
        Map<String, String> params() {
            var params = new LinkedHashMap<String, String>();
            if (query == null) return params;
            for (String pair : query.split("&")) {
                int eq = pair.indexOf('=');
                params.put(URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
                        URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
            }
            return params;
        }
    }

    @FunctionalInterface
    interface Handler {
        void handle(Request request, HttpExchange exchange) throws IOException;
    }

    private final HttpServer server;
    private final Map<String, Handler> routes = new ConcurrentHashMap<>();
    final List<Request> requests = new CopyOnWriteArrayList<>();

    FakeServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext("/", this::dispatch);
        server.start();
    }

    /** A started fake, for a field initializer ({@code @AutoClose final FakeServer server = FakeServer.start();}). */
    static FakeServer start() {
        try {
            return new FakeServer();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    FakeServer on(String methodAndPath, Handler handler) {
        routes.put(methodAndPath, handler);
        return this;
    }

    FakeServer json(String methodAndPath, int status, String body) {
        return on(methodAndPath, (r, e) -> respond(e, status, "application/json", body.getBytes(StandardCharsets.UTF_8)));
    }

    List<Request> requests(String methodAndPath) {
        return requests.stream().filter(r -> (r.method() + " " + r.path()).equals(methodAndPath)).toList();
    }

    private void dispatch(HttpExchange exchange) throws IOException {
        try (exchange) {
            URI uri = exchange.getRequestURI();
            var request = new Request(exchange.getRequestMethod(), uri.getPath(), uri.getRawQuery(),
                    exchange.getRequestHeaders().getFirst("Authorization"),
                    exchange.getRequestHeaders().getFirst("Accept"), exchange.getRequestBody().readAllBytes());
            requests.add(request);
            exchange.getResponseHeaders().add("X-Request-Id", "req_" + requests.size());
            Handler handler = routes.get(request.method() + " " + request.path());
            if (handler == null) {
                respond(exchange, 404, "application/json",
                        "{\"error\":{\"code\":\"not_found\",\"message\":\"no route\",\"details\":{}}}"
                                .getBytes(StandardCharsets.UTF_8));
                return;
            }
            handler.handle(request, exchange);
        }
    }

    static void respond(HttpExchange exchange, int status, String type, byte[] body) throws IOException {
        if (type != null) exchange.getResponseHeaders().set("Content-Type", type);
        if (status == 204 || body.length == 0) {
            exchange.sendResponseHeaders(status, -1);
            return;
        }
        exchange.sendResponseHeaders(status, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }

    static String error(String code, String message) {
        return "{\"error\": {\"code\": \"" + code + "\", \"message\": \"" + message + "\", \"details\": {}}}";
    }

    static String sandbox(String id, String name) {
        return """
                {"id": "%s", "name": %s, "template": "tiny", "state": "running", "stateReason": null,
                 "createdAt": "2026-11-29T10:00:00Z", "resources": {"cpus": 0.5, "memoryMb": 256, "pids": 128, "diskMb": 2048},
                 "env": {"FOO": "bar"}, "metadata": {"team": "x"}}""".formatted(id, name == null ? "null" : "\"" + name + "\"");
    }

    static String file(String path, String type, long size, String mode) {
        String name = path.substring(path.lastIndexOf('/') + 1);
        return """
                {"path": "%s", "name": "%s", "type": "%s", "size": %d, "mode": "%s",
                 "modifiedAt": "2026-11-29T10:00:00Z", "symlinkTarget": null}""".formatted(path, name, type, size, mode);
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
