package io.stasis.sdk;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;

/**
 * A loopback HTTP server that replays documented API responses: tests register a handler per
 * "METHOD /path" and read back the requests it received.
 */
final class FakeApi implements AutoCloseable {
    record Request(String method, String path, String query, Map<String, List<String>> headers, byte[] body) {
        String bodyText() {
            return new String(body, StandardCharsets.UTF_8);
        }

        String header(String name) {
            return headers.entrySet().stream().filter(e -> e.getKey().equalsIgnoreCase(name))
                    .map(e -> e.getValue().getFirst()).findFirst().orElse(null);
        }
    }

    @FunctionalInterface
    interface Handler {
        void handle(Request request, HttpExchange exchange) throws IOException;
    }

    private final HttpServer server;
    private final Map<String, Handler> routes = new ConcurrentHashMap<>();
    final List<Request> requests = new CopyOnWriteArrayList<>();

    FakeApi() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext("/", this::dispatch);
        server.start();
    }

    /** A started fake, for a field initializer ({@code @AutoClose final FakeApi api = FakeApi.start();}). */
    static FakeApi start() {
        try {
            return new FakeApi();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A new client of this fake with a test key and a 5 s request timeout; the caller closes it. */
    StasisClient client() {
        return StasisClient.builder().url(url()).apiKey("sk_test").requestTimeout(Duration.ofSeconds(5)).build();
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    FakeApi on(String methodAndPath, Handler handler) {
        routes.put(methodAndPath, handler);
        return this;
    }

    FakeApi json(String methodAndPath, int status, String body) {
        return on(methodAndPath, (request, exchange) -> respond(exchange, status, "application/json", body));
    }

    Request last() {
        return requests.getLast();
    }

    private void dispatch(HttpExchange exchange) throws IOException {
        try (exchange) {
            URI uri = exchange.getRequestURI();
            byte[] body = exchange.getRequestBody().readAllBytes();
            var request = new Request(exchange.getRequestMethod(), uri.getRawPath(), uri.getRawQuery(),
                    Map.copyOf(exchange.getRequestHeaders()), body);
            requests.add(request);
            exchange.getResponseHeaders().add("X-Request-Id", "req_test" + requests.size());
            Handler handler = routes.get(request.method() + " " + request.path());
            if (handler == null) {
                respond(exchange, 404, "application/json",
                        "{\"error\":{\"code\":\"not_found\",\"message\":\"no route\",\"details\":{}}}");
                return;
            }
            handler.handle(request, exchange);
        }
    }

    static void respond(HttpExchange exchange, int status, String contentType, String body) throws IOException {
        respond(exchange, status, contentType, body.getBytes(StandardCharsets.UTF_8));
    }

    static void respond(HttpExchange exchange, int status, String contentType, byte[] body) throws IOException {
        if (contentType != null) exchange.getResponseHeaders().set("Content-Type", contentType);
        if (status == 204) {
            exchange.sendResponseHeaders(204, -1);
            return;
        }
        exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }

    /** Starts a chunked event stream; write with {@link #send}. */
    static OutputStream startEvents(HttpExchange exchange) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
        exchange.sendResponseHeaders(200, 0);
        return exchange.getResponseBody();
    }

    static void send(OutputStream out, String text) throws IOException {
        out.write(text.getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
