package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.sdk.CreateSandboxRequest;
import io.stasis.sdk.LifecycleUpdate;
import io.stasis.sdk.Preview;
import io.stasis.sdk.PreviewRequest;
import io.stasis.sdk.Sandbox;
import io.stasis.testkit.Await;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Previews of real sandboxes, over their network links: a private preview refuses requests
 * without its token; a request to a hibernated sandbox resumes it and is answered; a WebSocket
 * upgrade reaches a server inside a hibernated sandbox.
 */
@Tag("root")
class PreviewIT {
    /**
     * A WebSocket server in busybox: answers the handshake (the accept key is base64 of the SHA-1
     * of the client's key and the protocol's GUID) and sends one unmasked text frame, "hello".
     */
    private static final String WS_SERVER = """
            #!/bin/sh
            key=""
            while IFS= read -r line; do
                line=$(printf '%s' "$line" | tr -d '\\r')
                [ -z "$line" ] && break
                case "$line" in Sec-WebSocket-Key:*) key=$(printf '%s' "${line#*:}" | tr -d ' ');; esac
            done
            accept=$(printf '%s' "${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11" | sha1sum | cut -d' ' -f1 | sed 's/../\\\\x&/g')
            accept=$(printf "$accept" | base64)
            printf 'HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\nSec-WebSocket-Accept: %s\\r\\n\\r\\n' "$accept"
            printf '\\201\\005hello'
            sleep 2
            """;

    private static ServiceFixture service;
    private static final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void start() throws Exception {
        service = ServiceFixture.start("--idle-check", "200ms");
    }

    @AfterAll
    static void stop() {
        service.close();
    }

    private static Sandbox sandboxServing() {
        return sandboxServing(CreateSandboxRequest.builder().template("tiny").build());
    }

    private static Sandbox sandboxServing(CreateSandboxRequest request) {
        var sandbox = service.client.sandboxes().create(request);
        sandbox.exec("sh", "-c", "mkdir -p /www && echo 'hello from the sandbox' > /www/index.html");
        sandbox.files().write("/ws.sh", WS_SERVER, "0755");
        sandbox.processes().start("httpd", "-f", "-p", "8000", "-h", "/www");
        sandbox.processes().start("nc", "-ll", "-p", "8001", "-e", "/ws.sh");
        Await.until("servers listening", Duration.ofSeconds(10), () -> sandbox.exec("sh", "-c", "netstat -ltn | grep -c ':800[01] '").stdout().strip().equals("2"));
        return sandbox;
    }

    private static HttpResponse<String> get(String url, String token) throws Exception {
        var request = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30));
        if (token != null) request.header(Preview.TOKEN_HEADER, token);
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Under gVisor too: the preview reaches the sentry's own network stack at the sandbox's address. */
    @EachRuntime
    void aPrivatePreviewOfAHibernatedSandboxResumesItAndAnswers(String runtime) throws Exception {
        ServiceFixture.assumeRuntime(runtime);
        var sandbox = sandboxServing(CreateSandboxRequest.builder().template("tiny").runtime(runtime).build());
        var preview = sandbox.previews().create(8000);
        assertThat(get(preview.pathUrl(), null).statusCode()).isEqualTo(401);
        assertThat(get(preview.pathUrl(), "wrong").statusCode()).isEqualTo(403);
        assertThat(get(preview.pathUrl(), preview.token()).body()).isEqualTo("hello from the sandbox\n");

        assertThat(sandbox.hibernate().isHibernated()).isTrue();
        var resumed = get(preview.pathUrl(), preview.token());
        assertThat(resumed.statusCode()).isEqualTo(200);
        assertThat(resumed.body()).isEqualTo("hello from the sandbox\n");
        assertThat(sandbox.refresh().isRunning()).isTrue();

        sandbox.previews().delete(preview.id());
        assertThat(get(preview.pathUrl(), preview.token()).statusCode()).isEqualTo(404);
        service.client.sandboxes().delete(sandbox.id());
    }

    @Test
    void previewRequestsKeepASandboxAwakeAndItPausesOnceTheyStop() throws Exception {
        var sandbox = sandboxServing(CreateSandboxRequest.builder().template("tiny")
                .lifecycle(LifecycleUpdate.builder().pauseAfterIdle(Duration.ofSeconds(2)).build()).build());
        var preview = sandbox.previews().create(PreviewRequest.builder(8000).isPublic(true).build());
        long until = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (System.nanoTime() < until) {
            assertThat(get(preview.pathUrl(), null).statusCode()).isEqualTo(200);
            assertThat(sandbox.refresh().isRunning()).as("awake while its preview is used").isTrue();
            Thread.sleep(400);
        }
        Await.until("paused once the requests stop", Duration.ofSeconds(15), () -> sandbox.refresh().isPaused());
        service.client.sandboxes().delete(sandbox.id());
    }

    @Test
    void aWebSocketUpgradeReachesAHibernatedSandbox() throws Exception {
        var sandbox = sandboxServing();
        var preview = sandbox.previews().create(PreviewRequest.builder(8001).isPublic(true).build());
        sandbox.hibernate();

        var received = new CompletableFuture<String>();
        var socket = http.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(30))
                .buildAsync(URI.create(preview.pathUrl().replaceFirst("^http", "ws")), new WebSocket.Listener() {
                    @Override
                    public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
                        received.complete(data.toString());
                        return null;
                    }
                }).get(30, TimeUnit.SECONDS);
        assertThat(received.get(30, TimeUnit.SECONDS)).isEqualTo("hello");
        socket.abort();
        assertThat(sandbox.refresh().isRunning()).isTrue();
        service.client.sandboxes().delete(sandbox.id());
    }
}
