package io.stasis.cli;

import static io.stasis.cli.FakeServer.error;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/** {@code stasis preview create|ls|rm} against a fake server. */
class PreviewCommandsTest {
    static final String PRIVATE = """
            {"id": "prv_1", "sandboxId": "sbx_1", "port": 3000, "public": false,
             "url": "http://3000-sbx-1.localhost:7071/", "pathUrl": "http://localhost:7071/preview/sbx_1/3000/",
             "token": "tok", "createdAt": "2026-11-29T10:00:00Z", "expiresAt": null}""";

    @AutoClose
    private final FakeServer server = FakeServer.start();
    private final CliRunner cli = new CliRunner(server);

    @Test
    void createPrintsTheUrlsAndTheTokenOnce() {
        server.json("POST /v1/sandboxes/demo/previews", 201, PRIVATE);
        assertThat(cli.run("preview", "create", "demo", "3000", "--ttl", "2h")).isZero();
        assertThat(server.requests.getLast().text()).isEqualTo("{\"port\":3000,\"public\":false,\"ttlSeconds\":7200}");
        assertThat(cli.out()).isEqualTo("""
                ID         prv_1
                PORT       3000
                ACCESS     token
                URL        http://3000-sbx-1.localhost:7071/
                PATH URL   http://localhost:7071/preview/sbx_1/3000/
                TOKEN      tok
                OPEN       http://3000-sbx-1.localhost:7071/?stasis_preview_token=tok
                EXPIRES    never
                """);

        server.json("POST /v1/sandboxes/demo/previews", 201, PRIVATE.replace("\"public\": false", "\"public\": true").replace("\"token\": \"tok\", ", ""));
        assertThat(cli.run("preview", "create", "--public", "demo", "3000")).isZero();
        assertThat(server.requests.getLast().text()).isEqualTo("{\"port\":3000,\"public\":true}");
        assertThat(cli.out()).doesNotContain("TOKEN");
    }

    @Test
    void lsListsAndRmRevokesEachGoingOnPastFailures() {
        server.json("GET /v1/sandboxes/demo/previews", 200, "{\"items\": [" + PRIVATE.replace("\"token\": \"tok\", ", "") + "], \"nextCursor\": null}");
        assertThat(cli.run("preview", "ls", "demo")).isZero();
        assertThat(cli.out()).isEqualTo("""
                ID      PORT   ACCESS   URL                                 EXPIRES
                prv_1   3000   token    http://3000-sbx-1.localhost:7071/   never
                """);

        server.json("DELETE /v1/sandboxes/demo/previews/prv_1", 204, "");
        server.json("DELETE /v1/sandboxes/demo/previews/prv_x", 404, error("preview_not_found", "no preview with id 'prv_x' in this sandbox"));
        assertThat(cli.run("preview", "rm", "demo", "prv_x", "prv_1")).isEqualTo(ExitCodes.NOT_FOUND);
        assertThat(cli.out()).isEqualTo("prv_1\n");
        assertThat(cli.err()).isEqualTo("error: preview_not_found: no preview with id 'prv_x' in this sandbox\n");
    }

    @Test
    void infoShowsOnePreviewWithoutItsToken() {
        server.json("GET /v1/sandboxes/demo/previews/prv_1", 200, PRIVATE.replace("\"token\": \"tok\", ", ""));
        assertThat(cli.run("preview", "info", "demo", "prv_1")).isZero();
        assertThat(cli.out()).startsWith("ID         prv_1\nPORT       3000\nACCESS     token\n").doesNotContain("TOKEN");
        assertThat(cli.run("--json", "preview", "info", "demo", "prv_1")).isZero();
        assertThat(cli.out()).contains("\"port\" : 3000");
        server.json("GET /v1/sandboxes/demo/previews/prv_x", 404, error("preview_not_found", "no preview prv_x"));
        assertThat(cli.run("preview", "info", "demo", "prv_x")).isEqualTo(ExitCodes.NOT_FOUND);
    }

    @Test
    void previewAloneShowsItsUsage() {
        assertThat(cli.run("preview")).isEqualTo(2);
        assertThat(cli.err()).contains("create", "ls", "rm");
    }
}
