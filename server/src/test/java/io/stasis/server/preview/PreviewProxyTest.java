package io.stasis.server.preview;

import io.stasis.core.sandbox.RuntimeKind;
import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.stasis.catalog.sql.SqlCatalog;
import io.stasis.core.error.StasisException;
import io.stasis.core.policy.LifecyclePolicy;
import io.stasis.core.preview.PreviewService;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.tenant.TenantId;
import io.stasis.http1.BodyFraming;
import io.stasis.http1.BodyRelay;
import io.stasis.http1.HeadReader;
import io.stasis.http1.HttpHeaders;
import io.stasis.http1.HttpInput;
import io.stasis.http1.ResponseHead;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The preview listener end to end, on 127.0.0.1 only: a real {@link PreviewService} over a SQLite
 * catalog, loopback upstreams (the JDK's HTTP server, a minimal WebSocket echo) standing in for
 * sandbox ports, and targets that point at them.
 */
class PreviewProxyTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    @TempDir
    Path dir;
    SqlCatalog catalog;
    MutableClock clock;
    PreviewService previews;
    HttpServer upstream;
    WebSocketEcho webSocketEcho;
    PreviewProxy proxy;
    SandboxId sandbox;
    int port;
    final AtomicInteger upstreamConnections = new AtomicInteger();
    final CountDownLatch sseSecondEvent = new CountDownLatch(1);
    final Map<SandboxId, Integer> targetsUsed = new ConcurrentHashMap<>();

    static final class MutableClock extends Clock {
        volatile Instant now = Instant.parse("2026-05-01T10:00:00Z");

        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    @BeforeEach
    void start() throws IOException {
        catalog = SqlCatalog.openSqlite(dir.resolve("stasis.db"));
        clock = new MutableClock();
        previews = new PreviewService(catalog, clock);
        sandbox = SandboxId.random();
        catalog.insert(new Sandbox(sandbox, Optional.empty(), "tiny", SandboxState.RUNNING, clock.instant(), Resources.DEFAULT,
                Map.of(), Map.of(), Optional.empty(), Optional.empty(), LifecyclePolicy.DEFAULT, TenantId.DEFAULT, RuntimeKind.RUNC));

        upstream = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 50);
        upstream.createContext("/", this::echo);
        upstream.createContext("/sse", this::sse);
        upstream.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        upstream.start();
        port = upstream.getAddress().getPort();
        webSocketEcho = new WebSocketEcho();

        PreviewTargets targets = new PreviewTargets() {
            @Override
            public InetSocketAddress connectTarget(SandboxId id, int p) {
                if (catalog.find(id).isEmpty()) throw StasisException.sandboxNotFound(id.value());
                targetsUsed.merge(id, 1, Integer::sum);
                return new InetSocketAddress(InetAddress.getLoopbackAddress(), p);
            }
        };
        proxy = PreviewProxy.start(new PreviewProxy.Settings("127.0.0.1", 0, "localhost"), previews, targets, clock);
    }

    @AfterEach
    void stop() {
        proxy.close();
        upstream.stop(0);
        webSocketEcho.close();
        catalog.close();
    }

    /** Answers with what it received: method, target, the headers the tests look at, the body's length and text. */
    private void echo(HttpExchange exchange) throws IOException {
        byte[] body = exchange.getRequestBody().readAllBytes();
        var seen = new TreeMap<String, String>();
        exchange.getRequestHeaders().forEach((name, values) -> seen.put(name.toLowerCase(), String.join(",", values)));
        String text = exchange.getRequestMethod() + " " + exchange.getRequestURI() + "\n"
                + "host=" + seen.get("host") + "\n"
                + "token=" + seen.get("x-stasis-preview-token") + "\n"
                + "cookie=" + seen.get("cookie") + "\n"
                + "xff=" + seen.get("x-forwarded-for") + "\n"
                + "xfproto=" + seen.get("x-forwarded-proto") + "\n"
                + "xfhost=" + seen.get("x-forwarded-host") + "\n"
                + "bodyBytes=" + body.length + "\n"
                + "body=" + new String(body, StandardCharsets.UTF_8) + "\n";
        byte[] out = text.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().add("Content-Type", "text/plain");
        exchange.sendResponseHeaders(200, out.length);
        try (var os = exchange.getResponseBody()) {
            os.write(out);
        }
    }

    /** One event, then a second only once the test has seen the first arrive through the proxy. */
    private void sse(HttpExchange exchange) throws IOException {
        exchange.getResponseHeaders().add("Content-Type", "text/event-stream");
        exchange.sendResponseHeaders(200, 0);
        try (var os = exchange.getResponseBody()) {
            os.write("data: one\n\n".getBytes(StandardCharsets.UTF_8));
            os.flush();
            if (!sseSecondEvent.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)) return;
            os.write("data: two\n\n".getBytes(StandardCharsets.UTF_8));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // --- a raw client: exact bytes out, exact responses back ---

    record Response(int status, HttpHeaders headers, String body) {
        String header(String name) {
            return headers.first(name).orElse(null);
        }
    }

    final class Client implements AutoCloseable {
        final Socket socket;
        final HttpInput in;
        final OutputStream out;

        Client() throws IOException {
            socket = new Socket(InetAddress.getLoopbackAddress(), proxy.port());
            socket.setSoTimeout((int) WAIT.toMillis());
            in = new HttpInput(socket.getInputStream());
            out = socket.getOutputStream();
        }

        Client send(String text) throws IOException {
            out.write(text.getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            return this;
        }

        ResponseHead head(String method) throws Exception {
            var head = HeadReader.readResponse(in);
            assertThat(head).as("a response to " + method).isNotNull();
            return head;
        }

        Response read(String method) throws Exception {
            var head = head(method);
            var body = new ByteArrayOutputStream();
            var framing = BodyFraming.ofResponse(method, head);
            BodyRelay.copy(framing, in, body, 502);
            String text = framing instanceof BodyFraming.Chunked ? dechunk(body.toByteArray()) : body.toString(StandardCharsets.UTF_8);
            return new Response(head.status(), head.headers(), text);
        }

        Response get(String target, String... headerLines) throws Exception {
            var text = new StringBuilder("GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + proxy.port() + "\r\n");
            for (String line : headerLines) text.append(line).append("\r\n");
            send(text.append("\r\n").toString());
            return read("GET");
        }

        boolean closedByPeer() throws IOException {
            try {
                return in.read() < 0;
            } catch (SocketException e) {
                return true;
            }
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    private String pathBase() {
        return "/preview/" + sandbox + "/" + port;
    }

    private Response get(String target, String... headerLines) throws Exception {
        try (var client = new Client()) {
            return client.get(target, headerLines);
        }
    }

    private PreviewService.Created privatePreview() {
        return previews.create(sandbox, port, false, Optional.empty());
    }

    // --- the tests ---

    @Test
    void aPrivatePreviewNeedsItsTokenAndTheTokenNeverGoesUpstream() throws Exception {
        String token = privatePreview().token().orElseThrow();

        assertThat(get(pathBase() + "/").status()).isEqualTo(401);
        assertThat(get(pathBase() + "/", "X-Stasis-Preview-Token: wrong").status()).isEqualTo(403);
        assertThat(get(pathBase() + "/", "Cookie: stasis_preview_token=" + "x".repeat(43)).status()).isEqualTo(403);

        var ok = get(pathBase() + "/a/b?c=1", "X-Stasis-Preview-Token: " + token, "Cookie: theme=dark; stasis_preview_token=" + token);
        assertThat(ok.status()).isEqualTo(200);
        assertThat(ok.body()).startsWith("GET /a/b?c=1\n")
                .contains("host=localhost:" + port, "token=null\n", "cookie=theme=dark\n", "xff=127.0.0.1\n", "xfproto=http\n",
                        "xfhost=127.0.0.1:" + proxy.port() + "\n")
                .doesNotContain(token);
    }

    @Test
    void aTokenInTheQueryIsExchangedForACookieScopedToThePreview() throws Exception {
        String token = privatePreview().token().orElseThrow();

        var redirect = get(pathBase() + "/page?x=1&stasis_preview_token=" + token + "&y=2");

        assertThat(redirect.status()).isEqualTo(302);
        assertThat(redirect.header("Location")).isEqualTo(pathBase() + "/page?x=1&y=2");
        assertThat(redirect.header("Set-Cookie")).isEqualTo("stasis_preview_token=" + token + "; Path=" + pathBase() + "/; HttpOnly; SameSite=Lax");

        var followed = get(redirect.header("Location"), "Cookie: stasis_preview_token=" + token);
        assertThat(followed.status()).isEqualTo(200);
        assertThat(followed.body()).startsWith("GET /page?x=1&y=2\n").contains("cookie=null\n").doesNotContain(token);

        assertThat(get(pathBase() + "/?stasis_preview_token=wrong").status()).isEqualTo(403);
    }

    @Test
    void hostBasedRequestsReachThePortInEitherFormOfTheId() throws Exception {
        String token = privatePreview().token().orElseThrow();
        for (String host : new String[] {port + "-" + sandbox.hostname() + ".localhost:" + proxy.port(), port + "-" + sandbox + ".LOCALHOST"}) {
            try (var client = new Client()) {
                client.send("GET /x?y=1 HTTP/1.1\r\nHost: " + host + "\r\nX-Stasis-Preview-Token: " + token + "\r\n\r\n");
                var response = client.read("GET");
                assertThat(response.status()).as(host).isEqualTo(200);
                assertThat(response.body()).startsWith("GET /x?y=1\n").contains("xfhost=" + host + "\n");
            }
        }
        try (var client = new Client()) {
            client.send("GET /?stasis_preview_token=" + token + " HTTP/1.1\r\nHost: " + port + "-" + sandbox.hostname() + ".localhost\r\n\r\n");
            var redirect = client.read("GET");
            assertThat(redirect.header("Location")).isEqualTo("/");
            assertThat(redirect.header("Set-Cookie")).contains("; Path=/;");
        }
    }

    @Test
    void aPublicPreviewNeedsNoToken() throws Exception {
        var created = previews.create(sandbox, port, true, Optional.empty());
        assertThat(created.token()).isEmpty();
        var response = get(pathBase());
        assertThat(response.status()).isEqualTo(200);
        assertThat(response.body()).startsWith("GET /\n");
    }

    @Test
    void unknownExpiredAndRevokedPreviews() throws Exception {
        assertThat(get(pathBase() + "/").status()).isEqualTo(404);
        assertThat(get("/preview/" + SandboxId.random() + "/" + port + "/").status()).isEqualTo(404);
        assertThat(get("/not-a-preview").status()).isEqualTo(404);

        var expiring = previews.create(sandbox, port, false, Optional.of(Duration.ofSeconds(60)));
        String token = expiring.token().orElseThrow();
        assertThat(get(pathBase() + "/", "X-Stasis-Preview-Token: " + token).status()).isEqualTo(200);
        clock.now = clock.now.plusSeconds(60);
        var gone = get(pathBase() + "/", "X-Stasis-Preview-Token: " + token);
        assertThat(gone.status()).isEqualTo(410);
        assertThat(gone.body()).contains("expired");

        var live = privatePreview();
        String liveToken = live.token().orElseThrow();
        try (var client = new Client()) {
            assertThat(client.get(pathBase() + "/", "X-Stasis-Preview-Token: " + liveToken).status()).isEqualTo(200);
            previews.delete(sandbox, live.preview().id().value());
            // The kept-alive connection is cut at once; a new one is refused.
            assertThat(client.closedByPeer()).isTrue();
        }
        assertThat(get(pathBase() + "/", "X-Stasis-Preview-Token: " + liveToken).status()).isEqualTo(410);
    }

    @Test
    void aKeptAliveConnectionCarriesSeveralRequestsOverOneUpstreamConnection() throws Exception {
        String token = privatePreview().token().orElseThrow();
        try (var client = new Client()) {
            // Two requests sent back to back (pipelined), then a third.
            client.send("GET " + pathBase() + "/one HTTP/1.1\r\nHost: a\r\nX-Stasis-Preview-Token: " + token + "\r\n\r\n"
                    + "POST " + pathBase() + "/two HTTP/1.1\r\nHost: a\r\nX-Stasis-Preview-Token: " + token
                    + "\r\nContent-Length: 5\r\n\r\nhello");
            assertThat(client.read("GET").body()).startsWith("GET /one\n");
            assertThat(client.read("POST").body()).startsWith("POST /two\n").contains("body=hello\n");
            var third = client.get(pathBase() + "/three", "X-Stasis-Preview-Token: " + token);
            assertThat(third.body()).startsWith("GET /three\n");
            assertThat(third.header("Connection")).isNull();
        }
        assertThat(targetsUsed.get(sandbox)).isEqualTo(3);
    }

    @Test
    void aChunkedRequestBodyIsFramedAndForwarded() throws Exception {
        String token = privatePreview().token().orElseThrow();
        try (var client = new Client()) {
            client.send("POST " + pathBase() + "/upload HTTP/1.1\r\nHost: a\r\nX-Stasis-Preview-Token: " + token
                    + "\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\n\r\n");
            var response = client.read("POST");
            assertThat(response.status()).isEqualTo(200);
            assertThat(response.body()).contains("bodyBytes=12\n", "body=hello, world\n");
            // The connection is still in step: the next request on it is answered.
            assertThat(client.get(pathBase() + "/after", "X-Stasis-Preview-Token: " + token).body()).startsWith("GET /after\n");
        }
    }

    @Test
    void malformedAndOversizedHeadsAreRefused() throws Exception {
        try (var client = new Client()) {
            client.send("GET / HTTP/1.1\r\nHost: a\r\nX: " + "a".repeat(70_000) + "\r\n\r\n");
            assertThat(client.read("GET").status()).isEqualTo(431);
        }
        try (var client = new Client()) {
            client.send("POST " + pathBase() + "/ HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n");
            assertThat(client.read("POST").status()).isEqualTo(400);
        }
    }

    @Test
    void anUnreachableUpstreamIsBadGateway() throws Exception {
        int closedPort;
        try (var s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = s.getLocalPort();
        }
        String token = previews.create(sandbox, closedPort, false, Optional.empty()).token().orElseThrow();
        var response = get("/preview/" + sandbox + "/" + closedPort + "/", "X-Stasis-Preview-Token: " + token);
        assertThat(response.status()).isEqualTo(502);
        assertThat(response.body()).contains("cannot connect to port " + closedPort);
    }

    @Test
    void serverSentEventsArriveAsTheyAreWritten() throws Exception {
        String token = privatePreview().token().orElseThrow();
        try (var client = new Client()) {
            client.send("GET " + pathBase() + "/sse HTTP/1.1\r\nHost: a\r\nAccept: text/event-stream\r\nX-Stasis-Preview-Token: " + token + "\r\n\r\n");
            var head = client.head("GET");
            assertThat(head.status()).isEqualTo(200);
            assertThat(head.headers().first("Transfer-Encoding")).contains("chunked");
            // The first event arrives while the upstream still holds the response open.
            String first = readChunkData(client.in);
            assertThat(first).isEqualTo("data: one\n\n");
            sseSecondEvent.countDown();
            assertThat(readChunkData(client.in)).isEqualTo("data: two\n\n");
        }
    }

    /** The data of a chunked body as the proxy relays it (no trailers from the upstreams here). */
    private static String dechunk(byte[] wire) throws IOException {
        var in = new ByteArrayInputStream(wire);
        var text = new StringBuilder();
        for (String data; !(data = readChunkData(in)).isEmpty(); ) text.append(data);
        return text.toString();
    }

    private static String readChunkData(InputStream in) throws IOException {
        var line = new StringBuilder();
        for (int b; (b = in.read()) != '\n'; ) if (b != '\r') line.append((char) b);
        int size = Integer.parseInt(line.toString(), 16);
        String data = new String(in.readNBytes(size), StandardCharsets.UTF_8);
        in.readNBytes(2);
        return data;
    }

    @Test
    void aWebSocketEchoesThroughTheProxy() throws Exception {
        String token = previews.create(sandbox, webSocketEcho.port(), false, Optional.empty()).token().orElseThrow();
        var received = new CompletableFuture<String>();
        try (var http = HttpClient.newHttpClient()) {
            var socket = http.newWebSocketBuilder().header("X-Stasis-Preview-Token", token)
                    .buildAsync(URI.create("ws://127.0.0.1:" + proxy.port() + "/preview/" + sandbox.hostname() + "/" + webSocketEcho.port() + "/ws"),
                            new WebSocket.Listener() {
                                @Override
                                public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
                                    received.complete(data.toString());
                                    return null;
                                }
                            })
                    .get(WAIT.toSeconds(), TimeUnit.SECONDS);
            socket.sendText("hello through the proxy", true).get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertThat(received.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo("hello through the proxy");
            assertThat(webSocketEcho.lastPath).isEqualTo("/ws");
            assertThat(webSocketEcho.lastToken).isNull();
            socket.abort();
        }
    }
}
