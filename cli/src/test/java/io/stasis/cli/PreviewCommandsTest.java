package io.stasis.cli;

import static io.stasis.cli.FakeServer.error;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@code stasis preview create|ls|rm} against a fake server. */
class PreviewCommandsTest {
    static final String PRIVATE = """
            {"id": "prv_1", "sandboxId": "sbx_1", "port": 3000, "public": false,
             "url": "http://3000-sbx-1.localhost:7071/", "pathUrl": "http://localhost:7071/preview/sbx_1/3000/",
             "token": "tok", "createdAt": "2026-11-29T10:00:00Z", "expiresAt": null}""";

    private FakeServer server;
    private String out;
    private String err;

    @BeforeEach
    void start() throws IOException {
        server = new FakeServer();
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private int run(String... args) {
        var outBuffer = new ByteArrayOutputStream();
        var errBuffer = new ByteArrayOutputStream();
        int code = Main.run(args, new PrintStream(outBuffer, true, StandardCharsets.UTF_8), new PrintStream(errBuffer, true, StandardCharsets.UTF_8),
                InputStream.nullInputStream(), Map.of("STASIS_URL", server.url(), "STASIS_API_KEY", "sk_env"));
        out = outBuffer.toString(StandardCharsets.UTF_8);
        err = errBuffer.toString(StandardCharsets.UTF_8);
        return code;
    }

    @Test
    void createPrintsTheUrlsAndTheTokenOnce() {
        server.json("POST /v1/sandboxes/demo/previews", 201, PRIVATE);
        assertThat(run("preview", "create", "demo", "3000", "--ttl", "2h")).isZero();
        assertThat(server.requests.getLast().text()).isEqualTo("{\"port\":3000,\"public\":false,\"ttlSeconds\":7200}");
        assertThat(out).isEqualTo("""
                ID         prv_1
                URL        http://3000-sbx-1.localhost:7071/
                PATH URL   http://localhost:7071/preview/sbx_1/3000/
                TOKEN      tok
                OPEN       http://3000-sbx-1.localhost:7071/?stasis_preview_token=tok
                EXPIRES    never
                """);

        server.json("POST /v1/sandboxes/demo/previews", 201, PRIVATE.replace("\"public\": false", "\"public\": true").replace("\"token\": \"tok\", ", ""));
        assertThat(run("preview", "create", "--public", "demo", "3000")).isZero();
        assertThat(server.requests.getLast().text()).isEqualTo("{\"port\":3000,\"public\":true}");
        assertThat(out).doesNotContain("TOKEN");
    }

    @Test
    void lsListsAndRmRevokesEachGoingOnPastFailures() {
        server.json("GET /v1/sandboxes/demo/previews", 200, "{\"items\": [" + PRIVATE.replace("\"token\": \"tok\", ", "") + "], \"nextCursor\": null}");
        assertThat(run("preview", "ls", "demo")).isZero();
        assertThat(out).isEqualTo("""
                ID      PORT   ACCESS   URL                                 EXPIRES
                prv_1   3000   token    http://3000-sbx-1.localhost:7071/   never
                """);

        server.json("DELETE /v1/sandboxes/demo/previews/prv_1", 204, "");
        server.json("DELETE /v1/sandboxes/demo/previews/prv_x", 404, error("preview_not_found", "no preview with id 'prv_x' in this sandbox"));
        assertThat(run("preview", "rm", "demo", "prv_x", "prv_1")).isEqualTo(1);
        assertThat(out).isEqualTo("prv_1\n");
        assertThat(err).isEqualTo("error: preview_not_found: no preview with id 'prv_x' in this sandbox\n");
    }

    @Test
    void previewAloneShowsItsUsage() {
        assertThat(run("preview")).isEqualTo(2);
        assertThat(err).contains("create", "ls", "rm");
    }
}
