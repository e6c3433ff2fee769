package io.stasis.cli;

import static io.stasis.cli.FakeServer.error;
import static io.stasis.cli.FakeServer.file;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/** files ls|stat|mkdir|mv|rm, forks, checkpoint-info, health, metrics and openapi: the routes that had no verb. */
class FilesCommandsTest {
    private static final String FILES = "/v1/sandboxes/demo/files";

    @AutoClose
    final FakeServer server = FakeServer.start();
    final CliRunner cli = new CliRunner(server);

    @Test
    void lsPrintsATableOfTheDirectory() {
        String link = """
                {"path": "/root/latest", "name": "latest", "type": "symlink", "size": 7, "mode": "0777",
                 "modifiedAt": "2026-11-29T10:00:00Z", "symlinkTarget": "app.py"}""";
        server.json("GET " + FILES + "/list", 200, "{\"items\": [" + file("/root/app.py", "file", 2048, "0644") + ", "
                + file("/root/data", "dir", 4096, "0755") + ", " + link + "], \"nextCursor\": null}");
        assertThat(cli.run("files", "ls", "demo", "/root")).isZero();
        assertThat(server.requests.getLast().params()).containsEntry("path", "/root");
        assertThat(cli.out()).isEqualTo("""
                TYPE      MODE   SIZE      MODIFIED               NAME
                file      0644   2.0 KiB   2026-11-29T10:00:00Z   app.py
                dir       0755   -         2026-11-29T10:00:00Z   data
                symlink   0777   -         2026-11-29T10:00:00Z   latest -> app.py
                """);

        assertThat(cli.run("--json", "files", "ls", "demo")).isZero();
        assertThat(server.requests.getLast().params()).containsEntry("path", "/");
        assertThat(cli.out()).startsWith("{\n  \"items\" : [").contains("\"path\" : \"/root/app.py\"", "\"type\" : \"dir\"");
    }

    @Test
    void statMkdirAndMvPrintTheEntryOrItsPath() {
        server.json("GET " + FILES + "/stat", 200, file("/root/app.py", "file", 2048, "0644"));
        assertThat(cli.run("files", "stat", "demo", "/root/app.py")).isZero();
        assertThat(cli.out()).contains("PATH       /root/app.py", "TYPE       file", "SIZE       2048 (2.0 KiB)", "MODE       0644");
        assertThat(cli.run("--json", "files", "stat", "demo", "/root/app.py")).isZero();
        assertThat(cli.out()).contains("\"size\" : 2048");

        server.json("POST " + FILES + "/mkdir", 200, file("/root/a/b", "dir", 4096, "0700"));
        assertThat(cli.run("files", "mkdir", "demo", "/root/a/b", "--mode", "0700")).isZero();
        assertThat(server.requests.getLast().params()).containsEntry("path", "/root/a/b").containsEntry("mode", "0700");
        assertThat(cli.out()).isEqualTo("/root/a/b\n");

        server.json("POST " + FILES + "/move", 200, file("/root/b.py", "file", 2048, "0644"));
        assertThat(cli.run("files", "mv", "demo", "/root/app.py", "/root/b.py", "-f")).isZero();
        assertThat(server.requests.getLast().text()).contains("\"from\":\"/root/app.py\"", "\"to\":\"/root/b.py\"",
                "\"overwrite\":true");
        assertThat(cli.out()).isEqualTo("/root/b.py\n");

        server.json("POST " + FILES + "/move", 409, error("file_exists", "/root/b.py exists"));
        assertThat(cli.run("files", "mv", "demo", "/root/app.py", "/root/b.py")).isEqualTo(ExitCodes.CONFLICT);
        assertThat(server.requests.getLast().text()).contains("\"overwrite\":false");
    }

    @Test
    void rmDeletesEachPathAndGoesOnPastAFailure() {
        server.on("DELETE " + FILES, (r, e) -> {
            if (r.params().get("path").equals("/root/missing")) {
                FakeServer.respond(e, 404, "application/json", error("file_not_found", "no /root/missing").getBytes());
            } else {
                FakeServer.respond(e, 204, null, new byte[0]);
            }
        });
        assertThat(cli.run("files", "rm", "-r", "demo", "/root/missing", "/root/data")).isEqualTo(ExitCodes.NOT_FOUND);
        assertThat(cli.out()).isEqualTo("/root/data\n");
        assertThat(cli.err()).isEqualTo("error: file_not_found: no /root/missing\n");
        assertThat(server.requests.getLast().params()).containsEntry("recursive", "true");
        assertThat(cli.run("files")).as("the group alone prints its usage").isEqualTo(ExitCodes.USAGE);
        assertThat(cli.err()).contains("ls", "stat", "mkdir", "mv", "rm");
    }

    @Test
    void forksListsTheChildrenAsListDoes() {
        server.json("GET /v1/sandboxes/demo/forks", 200, "{\"items\": [" + FakeServer.sandbox("sbx_2", "try-1") + "]}");
        assertThat(cli.run("forks", "demo")).isZero();
        assertThat(cli.out()).startsWith("ID      NAME    TEMPLATE   STATE     CREATED\nsbx_2   try-1   tiny       running");
        assertThat(cli.run("--json", "forks", "demo")).isZero();
        assertThat(cli.out()).startsWith("{\n  \"items\" : [").contains("\"id\" : \"sbx_2\"");
    }

    @Test
    void checkpointInfoShowsOneCheckpoint() {
        server.json("GET /v1/checkpoints/ckpt_1", 200, LiveStateCommandsTest.checkpoint("ckpt_1", "ready", true, "user", 1048576));
        assertThat(cli.run("checkpoint-info", "ckpt_1")).isZero();
        assertThat(cli.out()).contains("ID        ckpt_1", "NAME      ready", "SANDBOX   sbx_1", "MEMORY    yes", "SIZE      1.0 MiB");
        assertThat(cli.run("--json", "checkpoint-info", "ckpt_1")).isZero();
        assertThat(cli.out()).contains("\"sandboxId\" : \"sbx_1\"");
        server.json("GET /v1/checkpoints/ckpt_x", 404, error("checkpoint_not_found", "no checkpoint ckpt_x"));
        assertThat(cli.run("checkpoint-info", "ckpt_x")).isEqualTo(ExitCodes.NOT_FOUND);
    }

    @Test
    void healthPrintsTheStatusAndFailsWhenNotOk() {
        server.json("GET /healthz", 200, "{\"status\": \"ok\"}");
        assertThat(cli.run("health")).isZero();
        assertThat(cli.out()).isEqualTo("ok\n");
        assertThat(cli.run("--json", "health")).isZero();
        assertThat(cli.out()).contains("\"status\" : \"ok\"");
        server.json("GET /healthz", 200, "{\"status\": \"degraded\"}");
        assertThat(cli.run("health")).isEqualTo(ExitCodes.ERROR);
    }

    @Test
    void metricsAndOpenapiPrintTheServersDocumentsWithoutAKey() {
        server.on("GET /metrics", (r, e) -> FakeServer.respond(e, 200, "text/plain; version=0.0.4",
                "# TYPE stasis_sandboxes gauge\nstasis_sandboxes{state=\"running\"} 2\n".getBytes()));
        server.on("GET /v1/openapi.yaml", (r, e) -> FakeServer.respond(e, 200, "application/yaml", "openapi: 3.1.0".getBytes()));
        String[] noKey = {"--data-dir", "/nonexistent", "--url", server.url()};
        assertThat(Main.run(concat(noKey, "metrics"), out(), out(), InputStream.nullInputStream(), Map.of()))
                .isZero();
        assertThat(server.requests.getLast().authorization()).isNull();

        assertThat(cli.run("metrics")).isZero();
        assertThat(cli.out()).isEqualTo("# TYPE stasis_sandboxes gauge\nstasis_sandboxes{state=\"running\"} 2\n");
        assertThat(cli.run("openapi")).isZero();
        assertThat(cli.out()).isEqualTo("openapi: 3.1.0\n");

        int before = server.requests.size();
        assertThat(cli.run("--json", "metrics")).isEqualTo(ExitCodes.USAGE);
        assertThat(cli.err()).isEqualTo("error: --json does not apply: the metrics are Prometheus text\n");
        assertThat(server.requests).hasSize(before);
    }

    @Test
    void healthNeedsNoKey() {
        server.json("GET /healthz", 200, "{\"status\": \"ok\"}");
        assertThat(Main.run(new String[] {"--data-dir", "/nonexistent", "--url", server.url(), "health"}, out(), out(),
                InputStream.nullInputStream(), Map.of())).isZero();
        assertThat(server.requests.getLast().authorization()).isNull();
    }

    private static PrintStream out() {
        return new PrintStream(OutputStream.nullOutputStream());
    }

    private static String[] concat(String[] first, String last) {
        String[] all = Arrays.copyOf(first, first.length + 1);
        all[first.length] = last;
        return all;
    }
}
