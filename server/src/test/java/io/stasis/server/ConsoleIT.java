package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The web console: its files as served (a strict Content Security Policy, caching by digest), what
 * a browser needs of the API (who a credential is, WebSockets authenticated by subprotocol, events
 * from now on), and the console itself in Debian's chromium driven by playwright-core
 * ({@code src/test/ts/console-session}), screenshots in {@code target/console-screenshots}.
 */
@Tag("root")
class ConsoleIT {
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static ServiceFixture service;
    private static RawApi api;
    private static HttpClient http;

    @BeforeAll
    static void start() throws Exception {
        service = ServiceFixture.start();
        api = new RawApi(service.url, service.rootKey);
        http = HttpClient.newHttpClient();
    }

    @AfterAll
    static void stop() {
        http.close();
        api.close();
        service.close();
    }

    private static HttpResponse<String> fetch(String path, Map<String, String> headers) throws Exception {
        var request = HttpRequest.newBuilder(URI.create(service.url + path));
        headers.forEach(request::header);
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void theConsoleIsServedFromTheJarUnderAStrictPolicy() throws Exception {
        assertThat(fetch("/", Map.of()).headers().firstValue("Location")).hasValue("/console/");

        var page = fetch("/console/", Map.of());
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.headers().firstValue("Content-Type").orElseThrow()).startsWith("text/html");
        assertThat(page.body()).contains("<script type=\"module\" src=\"/console/app.js\">");
        String policy = page.headers().firstValue("Content-Security-Policy").orElseThrow();
        assertThat(policy).contains("default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'")
                .doesNotContain("unsafe-inline").doesNotContain("unsafe-eval");
        assertThat(page.headers().firstValue("X-Content-Type-Options")).hasValue("nosniff");

        var script = fetch("/console/views/terminal.js", Map.of());
        assertThat(script.headers().firstValue("Content-Type").orElseThrow()).startsWith("text/javascript");
        assertThat(script.headers().firstValue("Cache-Control")).hasValue("no-cache");
        String etag = script.headers().firstValue("ETag").orElseThrow();
        assertThat(fetch("/console/views/terminal.js", Map.of("If-None-Match", etag)).statusCode()).as("unchanged: not sent again").isEqualTo(304);

        var vendor = fetch("/console/vendor/xterm-4.9.0/xterm.js", Map.of());
        assertThat(vendor.statusCode()).isEqualTo(200);
        assertThat(vendor.headers().firstValue("Cache-Control").orElseThrow()).contains("immutable");

        for (String missing : new String[] {"/console/nope.js", "/console/vendor/xterm-4.9.0/package.json", "/console/%2e%2e/openapi.yaml",
                "/console/Index.HTML"}) {
            var answer = fetch(missing, Map.of());
            assertThat(answer.statusCode()).as(missing).isIn(400, 404);
            assertThat(answer.body()).as(missing).contains("\"error\"");
        }
    }

    @Test
    void whoamiTellsACredentialWhatItIs() {
        var root = api.get("/v1/whoami");
        assertThat(root.get("root").asBoolean()).isTrue();
        assertThat(root.get("kind").asText()).isEqualTo("key");
        assertThat(root.get("tenantId").asText()).isEqualTo("ten_default");
        assertThat(root.has("scope")).isFalse();

        String sandbox = api.post("/v1/sandboxes", "{}").get("id").asText();
        String token = api.post("/v1/tokens", "{\"scope\": {\"sandbox\": \"" + sandbox + "\"}, \"permissions\": [\"sandbox:read\", \"exec\"]}")
                .get("token").asText();
        try (var scoped = new RawApi(service.url, token)) {
            var me = scoped.get("/v1/whoami");
            assertThat(me.get("kind").asText()).isEqualTo("token");
            assertThat(me.get("root").asBoolean()).isFalse();
            assertThat(me.get("scope").get("sandbox").asText()).isEqualTo(sandbox);
            assertThat(me.get("permissions")).extracting(n -> n.asText()).containsExactly("exec", "sandbox:read");
        }
        try (var nobody = new RawApi(service.url, "sk_not_a_key")) {
            assertThat(nobody.call("GET", "/v1/whoami", null).status()).isEqualTo(401);
        }
    }

    /** What a browser does, which cannot set a WebSocket's headers: the credential as a subprotocol. */
    @Test
    void aTerminalOpensWithTheCredentialOfferedAsASubprotocol() throws Exception {
        String sandbox = api.post("/v1/sandboxes", "{}").get("id").asText();
        var output = new StringBuilder();
        var exited = new CompletableFuture<String>();
        var listener = new WebSocket.Listener() {
            @Override
            public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
                if (data.toString().contains("\"exit\"")) exited.complete(output.toString());
                ws.request(1);
                return null;
            }

            @Override
            public CompletionStage<?> onBinary(WebSocket ws, ByteBuffer data, boolean last) {
                output.append(StandardCharsets.UTF_8.decode(data));
                ws.request(1);
                return null;
            }
        };
        String terminal = service.url.replace("http:", "ws:") + "/v1/sandboxes/" + sandbox + "/terminal?cmd=echo&cmd=via-subprotocol";
        var ws = http.newWebSocketBuilder().subprotocols("stasis", "bearer." + service.rootKey)
                .buildAsync(URI.create(terminal), listener).get(30, TimeUnit.SECONDS);
        assertThat(ws.getSubprotocol()).as("the credential is never echoed").isEqualTo("stasis");
        assertThat(exited.get(30, TimeUnit.SECONDS)).contains("via-subprotocol");

        assertThatThrownBy(() -> http.newWebSocketBuilder().subprotocols("stasis", "bearer.sk_not_a_key")
                .buildAsync(URI.create(terminal), listener).join())
                .isInstanceOf(CompletionException.class).hasCauseInstanceOf(WebSocketHandshakeException.class)
                .satisfies(e -> assertThat(((WebSocketHandshakeException) e.getCause()).getResponse().statusCode()).isEqualTo(401));
    }

    @Test
    void eventsAfterNowAreOnlyTheOnesStillToCome() {
        String sandbox = api.post("/v1/sandboxes", "{}").get("id").asText();
        assertThat(api.get("/v1/events").get("items")).isNotEmpty();
        assertThat(api.get("/v1/events?after=now").get("items")).isEmpty();
        long before = api.get("/v1/events?limit=1000").get("items").size();
        api.post("/v1/sandboxes/" + sandbox + "/pause", "{}");
        assertThat(api.get("/v1/events?limit=1000").get("items").size()).isEqualTo(before + 1);
    }

    /** The console as a person uses it, in a real browser: see src/test/ts/console-session/session.mjs for the steps. */
    @Test
    void theConsoleWorksInARealBrowser() throws Exception {
        assumeTrue(Files.isExecutable(CHROMIUM), "chromium is installed (./stasis test installs it)");
        var other = api.post("/v1/tenants", "{\"name\": \"console-other\"}");
        String otherKey = api.post("/v1/tenants/" + other.get("id").asText() + "/keys", "{}").get("secret").asText();
        var session = NodeScripts.runSession("console-session", Map.of("STASIS_URL", service.url, "STASIS_ROOT_KEY", service.rootKey,
                "STASIS_OTHER_KEY", otherKey, "STASIS_CHROMIUM", CHROMIUM.toString(),
                "STASIS_SCREENSHOTS", Path.of("target/console-screenshots").toAbsolutePath().toString()), Duration.ofMinutes(5));
        assertThat(session.code()).as(session.output()).isZero();
        assertThat(session.output()).contains("session ok");
    }
}
