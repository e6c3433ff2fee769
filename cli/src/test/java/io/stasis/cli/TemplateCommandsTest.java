package io.stasis.cli;

import static io.stasis.cli.FakeServer.error;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code stasis template build|ls|show|logs|rm}, against a fake server. */
class TemplateCommandsTest {
    static final String BUILDING = """
            {"name": "app", "description": "", "status": "building",
             "build": {"status": "building", "from": "base", "step": 1, "steps": 3, "cachedSteps": 0,
                       "startedAt": "2026-11-29T10:00:00Z"}}""";
    static final String READY = """
            {"name": "app", "description": "", "status": "ready", "version": "2", "builtAt": "2026-11-29T10:01:00Z",
             "sizeBytes": 4096, "from": "base", "env": {"A": "1"}, "workdir": "/src", "cmd": ["/bin/sh", "-c", "make watch"],
             "build": {"status": "ready", "from": "base", "step": 3, "steps": 3, "cachedSteps": 1,
                       "startedAt": "2026-11-29T10:00:00Z", "endedAt": "2026-11-29T10:01:00Z"}}""";
    static final String FAILED = """
            {"name": "app", "description": "", "status": "failed", "version": "1", "from": "base",
             "build": {"status": "failed", "from": "base", "step": 2, "steps": 3, "cachedSteps": 0,
                       "startedAt": "2026-11-29T10:00:00Z", "endedAt": "2026-11-29T10:00:30Z",
                       "failure": {"step": 2, "instruction": "RUN make", "exitCode": 2,
                                   "message": "step 2 (RUN make) exited with 2",
                                   "output": "# step 2/3: RUN make\\ncc -o app app.c\\napp.c:1: error: expected ';'\\n"}}}""";
    static final String LOG = "# step 2/3: RUN make\ncc -o app app.c\napp.c:1: error: expected ';'\n";
    private static final ObjectMapper JSON = new ObjectMapper();

    @AutoClose
    private final FakeServer server = FakeServer.start();
    private final CliRunner cli = new CliRunner(server);

    @TempDir
    Path dir;

    /** The log as two reads and the end; {@code template} answers with {@code view}. */
    private void buildEndsAs(String view) {
        server.json("POST /v1/templates", 202, BUILDING);
        server.on("GET /v1/templates/app/logs", (request, exchange) -> {
            String log = switch (request.params().get("offset")) {
                case "0" -> "{\"start\": 0, \"output\": \"# step 2/3: RUN make\\ncc -o app app.c\\n\", \"next\": 37, \"done\": false}";
                case "37" -> "{\"start\": 37, \"output\": \"app.c:1: error: expected ';'\\n\", \"next\": 66, \"done\": false}";
                default -> "{\"start\": 66, \"output\": \"\", \"next\": 66, \"done\": true}";
            };
            FakeServer.respond(exchange, 200, "application/json", log.getBytes(StandardCharsets.UTF_8));
        });
        server.json("GET /v1/templates/app", 200, view);
    }

    private JsonNode sent() throws IOException {
        return JSON.readTree(server.requests("POST /v1/templates").getLast().body());
    }

    @Test
    void aBuildFromStepsSendsThemInOrderAndPrintsTheOutputAsItComes() throws IOException {
        buildEndsAs(READY);
        assertThat(cli.run("template", "build", "app", "--from", "base", "--env", "A=1", "--run", "make", "--workdir", "/src",
                "--copy", "Makefile:.", "--run", "make install", "--user", "root", "--cmd", "make watch", "--context", dir.toString(),
                "--egress-default", "allow", "--memory-mb", "2048")).isZero();
        JsonNode body = sent();
        assertThat(body.get("steps").toString()).isEqualTo("[{\"env\":{\"A\":\"1\"}},{\"run\":\"make\"},{\"workdir\":\"/src\"},"
                + "{\"copy\":{\"src\":\"Makefile\",\"dest\":\".\"}},{\"run\":\"make install\"},{\"user\":\"root\"}]");
        assertThat(body.get("from").asText()).isEqualTo("base");
        assertThat(body.get("cmd").toString()).isEqualTo("[\"/bin/sh\",\"-c\",\"make watch\"]");
        assertThat(body.get("resources").toString()).isEqualTo("{\"memoryMb\":2048}");
        assertThat(body.get("network").toString()).isEqualTo("{\"egress\":{\"default\":\"allow\",\"allow\":[],\"deny\":[]}}");
        assertThat(body.has("context")).isTrue();

        assertThat(cli.err()).isEqualTo(LOG);
        assertThat(cli.out()).isEqualTo("app version 2 ready (3 steps, 1 cached; 4.0 KiB)\n");
        assertThat(server.requests("GET /v1/templates/app/logs")).extracting(FakeServer.Request::query)
                .containsExactly("offset=0&follow=true", "offset=37&follow=true", "offset=66&follow=true");
    }

    @Test
    void aDockerfileIsSentWithTheContextOnlyWhenAsked() throws IOException {
        buildEndsAs(READY);
        Path dockerfile = Files.writeString(dir.resolve("Dockerfile"), "FROM base\nCOPY app.py /app/\nCMD python3 /app/app.py\n");
        Files.writeString(dir.resolve("app.py"), "print('hi')\n");

        assertThat(cli.run("template", "build", "app", "-f", dockerfile.toString())).isZero();
        assertThat(fieldNames(sent())).containsExactly("name", "dockerfile");
        assertThat(sent().get("dockerfile").asText()).isEqualTo("FROM base\nCOPY app.py /app/\nCMD python3 /app/app.py\n");

        assertThat(cli.run("template", "build", "app", "-f", dockerfile.toString(), "--context")).as("beside the Dockerfile").isZero();
        assertThat(fieldNames(sent())).containsExactly("name", "dockerfile", "context");
        assertThat(gunzipped(sent())).contains("./app.py", "print('hi')", "./Dockerfile");

        Path other = Files.createDirectories(dir.resolve("other"));
        Files.writeString(other.resolve("data.csv"), "a,b\n");
        assertThat(cli.run("template", "build", "app", "--context", other.toString(), "-f", dockerfile.toString())).isZero();
        assertThat(gunzipped(sent())).contains("./data.csv").doesNotContain("app.py");
    }

    @Test
    void aPrebootNeedsBothCommandsAndShowsInShow() throws IOException {
        buildEndsAs(READY);
        assertThat(cli.run("template", "build", "app", "--from", "base", "--start-cmd", "python3 -m http.server", "--ready-cmd",
                "curl -sf localhost:8000", "--ready-timeout", "2m", "-q")).isZero();
        assertThat(sent().get("startCmd").asText()).isEqualTo("python3 -m http.server");
        assertThat(sent().get("readyCmd").asText()).isEqualTo("curl -sf localhost:8000");
        assertThat(sent().get("readyTimeoutMs").asLong()).isEqualTo(120_000);
        assertThat(cli.run("template", "build", "app", "--from", "base", "--start-cmd", "server")).isEqualTo(ExitCodes.USAGE);
        assertThat(cli.err()).contains("a pre-boot needs both --start-cmd and --ready-cmd");

        server.json("GET /v1/templates/app", 200, READY.replace("\"workdir\"", "\"startCmd\": \"python3 -m http.server\", "
                + "\"readyCmd\": \"curl -sf localhost:8000\", \"workdir\""));
        assertThat(cli.run("template", "show", "app")).isZero();
        assertThat(cli.out()).contains("""
                CMD           /bin/sh -c 'make watch'
                PREBOOTED     python3 -m http.server
                READY WHEN    curl -sf localhost:8000
                ENV           A=1
                """);
    }

    @Test
    void aDockerfileCanComeFromStdin() throws IOException {
        buildEndsAs(READY);
        assertThat(cli.runWithInput("FROM tiny\nRUN true\n", "template", "build", "app", "-f", "-", "-q")).isZero();
        assertThat(sent().get("dockerfile").asText()).isEqualTo("FROM tiny\nRUN true\n");
        assertThat(cli.err()).as("quiet, not a terminal").isEmpty();
    }

    @Test
    void aFailedBuildExitsOneSayingWhereAndWhy() {
        buildEndsAs(FAILED);
        assertThat(cli.run("template", "build", "app", "--from", "base", "--run", "make", "-q")).isEqualTo(ExitCodes.ERROR);
        assertThat(cli.out()).isEmpty();
        assertThat(cli.err()).isEqualTo("error: template app failed at step 2 of 3 (RUN make), exit code 2: step 2 (RUN make) exited with 2\n"
                + LOG);

        assertThat(cli.run("template", "build", "app", "--from", "base", "--run", "make")).isEqualTo(ExitCodes.ERROR);
        assertThat(cli.err()).as("the followed output already ends with the failure's lines")
                .isEqualTo(LOG + "error: template app failed at step 2 of 3 (RUN make), exit code 2: step 2 (RUN make) exited with 2\n");

        assertThat(cli.run("--json", "template", "build", "app", "--from", "base", "--run", "make", "-q")).isEqualTo(ExitCodes.ERROR);
        assertThat(cli.out()).contains("\"failure\"", "\"exitCode\" : 2", "\"instruction\" : \"RUN make\"");
    }

    @Test
    void quietShowsWhichStepRunsOnATerminal() {
        var reads = new AtomicInteger();
        server.json("POST /v1/templates", 202, BUILDING);
        server.on("GET /v1/templates/app", (r, e) -> FakeServer.respond(e, 200, "application/json",
                (reads.incrementAndGet() == 1 ? BUILDING : READY).getBytes(StandardCharsets.UTF_8)));
        assertThat(cli.runOnTerminal("template", "build", "app", "--from", "base", "--run", "make", "--quiet")).isZero();
        assertThat(cli.err()).startsWith("\rbuilding app: step 1 of 3 (0 cached)... 0s").endsWith("\r");
        assertThat(cli.out()).isEqualTo("app version 2 ready (3 steps, 1 cached; 4.0 KiB)\n");
        assertThat(server.requests("GET /v1/templates/app/logs")).isEmpty();
    }

    @Test
    void optionsThatCannotGoTogetherAreUsageErrors() {
        assertThat(cli.run("template", "build", "app", "-f", "Dockerfile", "--run", "make")).isEqualTo(ExitCodes.USAGE);
        assertThat(cli.err()).contains("-f takes FROM, the steps and CMD from the Dockerfile");
        assertThat(cli.run("template", "build", "app", "--run", "make")).isEqualTo(ExitCodes.USAGE);
        assertThat(cli.err()).contains("give a Dockerfile (-f) or the template to build on (--from)");
        assertThat(cli.run("template", "build", "app", "--from", "base", "--env", "A")).isEqualTo(ExitCodes.USAGE);
        assertThat(cli.err()).contains("--env takes K=V, was 'A'");
        assertThat(cli.run("template", "build", "app", "--from", "base", "--copy", "Makefile")).isEqualTo(ExitCodes.USAGE);
        assertThat(cli.err()).contains("--copy takes SRC:DEST, was 'Makefile'");
        assertThat(cli.run("template", "build", "app", "--from", "base", "--context", dir.resolve("missing").toString())).isEqualTo(ExitCodes.USAGE);
        assertThat(cli.err()).contains("does not exist");
        assertThat(cli.run("template", "build", "app", "-f", dir.resolve("Dockerfile").toString())).isEqualTo(ExitCodes.ERROR);
        assertThat(cli.err()).isEqualTo("error: cannot read the Dockerfile " + dir.resolve("Dockerfile") + ": no such file\n");
        assertThat(server.requests).isEmpty();
    }

    @Test
    void theServersRefusalsKeepTheirExitCodes() {
        server.json("POST /v1/templates", 409, error("name_taken", "template 'base' is one of the service's own"));
        assertThat(cli.run("template", "build", "base", "--from", "tiny")).isEqualTo(ExitCodes.CONFLICT);
        assertThat(cli.err()).isEqualTo("error: name_taken: template 'base' is one of the service's own\n");
        server.json("POST /v1/templates", 422, error("invalid_request", "dockerfile: line 2: ADD is not supported"));
        assertThat(cli.runWithInput("FROM tiny\nADD x /\n", "template", "build", "app", "-f", "-")).isEqualTo(ExitCodes.INVALID_REQUEST);
        assertThat(cli.err()).contains("line 2: ADD is not supported");
    }

    @Test
    void lsListsAsTemplatesDoes() {
        server.json("GET /v1/templates", 200, "{\"items\": [" + READY + "], \"nextCursor\": null}");
        assertThat(cli.run("template", "ls")).isZero();
        assertThat(cli.out()).isEqualTo("""
                NAME   STATUS   VERSION   SIZE
                app    ready    2         4.0 KiB
                """);
        assertThat(cli.run("--json", "template", "ls")).isZero();
        assertThat(cli.out()).contains("\"items\"", "\"workdir\" : \"/src\"");
    }

    @Test
    void showPrintsWhatTheBuildSetAndWhereItFailed() throws IOException {
        server.json("GET /v1/templates/app", 200, READY);
        assertThat(cli.run("template", "show", "app")).isZero();
        assertThat(cli.out()).isEqualTo("""
                NAME          app
                DESCRIPTION   -
                STATUS        ready
                VERSION       2
                BUILT         2026-11-29T10:01:00Z
                SIZE          4.0 KiB
                MESSAGE       -
                FROM          base
                WORKDIR       /src
                CMD           /bin/sh -c 'make watch'
                ENV           A=1
                BUILD         ready: 3 steps, 1 cached
                STARTED       2026-11-29T10:00:00Z
                ENDED         2026-11-29T10:01:00Z
                """);

        server.json("GET /v1/templates/app", 200, FAILED);
        assertThat(cli.run("template", "show", "app")).isZero();
        assertThat(cli.out()).contains("""
                BUILD         failed at step 2 of 3, 0 cached
                STARTED       2026-11-29T10:00:00Z
                ENDED         2026-11-29T10:00:30Z
                FAILED STEP   2: RUN make
                EXIT CODE     2
                ERROR         step 2 (RUN make) exited with 2
                OUTPUT        # step 2/3: RUN make
                              cc -o app app.c
                              app.c:1: error: expected ';'
                """);

        assertThat(cli.run("--json", "template", "show", "app")).isZero();
        assertThat(JSON.readTree(cli.out())).isEqualTo(JSON.readTree(FAILED));
    }

    @Test
    void logsPrintWhatThereIsOrFollowUntilTheEnd() throws IOException {
        buildEndsAs(FAILED);
        assertThat(cli.run("template", "logs", "app")).isZero();
        assertThat(cli.out()).isEqualTo(LOG);
        assertThat(server.requests("GET /v1/templates/app/logs")).extracting(FakeServer.Request::query)
                .containsExactly("offset=0", "offset=37", "offset=66");

        assertThat(cli.run("--json", "template", "logs", "app", "--offset", "37")).isZero();
        assertThat(JSON.readTree(cli.out())).isEqualTo(JSON.readTree(
                "{\"start\": 37, \"output\": \"app.c:1: error: expected ';'\\n\", \"next\": 66, \"done\": true}"));

        assertThat(cli.run("template", "logs", "--follow", "app")).as("the build failed").isEqualTo(ExitCodes.ERROR);
        assertThat(cli.out()).isEqualTo(LOG);
        assertThat(cli.err()).startsWith("error: template app failed at step 2 of 3 (RUN make)");

        assertThat(cli.run("--json", "template", "logs", "-f", "app")).isEqualTo(ExitCodes.ERROR);
        assertThat(cli.out().lines().toList()).hasSize(2).allSatisfy(line -> assertThat(JSON.readTree(line).has("next")).isTrue());
    }

    @Test
    void logsSayWhenTheServerDroppedTheStart() {
        server.json("GET /v1/templates/app/logs", 200, "{\"start\": 4194304, \"output\": \"tail\\n\", \"next\": 4194309, \"done\": true}");
        assertThat(cli.run("template", "logs", "app")).isZero();
        assertThat(cli.out()).isEqualTo("tail\n");
        assertThat(cli.err()).isEqualTo("stasis: 4.0 MiB of the build's output (bytes 0 to 4194304) were dropped by the server, "
                + "which keeps the last part of it\n");
    }

    @Test
    void rmDeletesEachAndSaysWhichSandboxesStillUseOne() {
        server.on("DELETE /v1/templates/old", (r, e) -> FakeServer.respond(e, 204, null, new byte[0]));
        server.json("DELETE /v1/templates/app", 409, error("template_in_use", "template 'app' is used by 1 sandbox(es): sbx_1; delete them first"));
        assertThat(cli.run("template", "rm", "old", "app")).isEqualTo(ExitCodes.CONFLICT);
        assertThat(cli.out()).isEqualTo("old\n");
        assertThat(cli.err()).isEqualTo("error: template_in_use: template 'app' is used by 1 sandbox(es): sbx_1; delete them first\n");
    }

    @Test
    void theGroupAloneShowsItsVerbsAndCompletionKnowsThem() {
        assertThat(cli.run("template")).isEqualTo(ExitCodes.USAGE);
        assertThat(cli.err()).contains("build", "ls", "show", "logs", "rm");
        assertThat(cli.run("template", "build", "--help")).isZero();
        assertThat(cli.out()).contains("--run=SHELL-COMMAND", "--copy=SRC:DEST", "--context[=DIR]", "Steps, run in the order given");
        assertThat(cli.run("completion", "bash")).isZero();
        assertThat(cli.out()).contains("_picocli_stasis_template_build", "--context", "--copy", "_picocli_stasis_template_logs");
        assertThat(cli.run("templates", "--help")).as("the older verb stays").isZero();
    }

    private static List<String> fieldNames(JsonNode node) {
        return node.properties().stream().map(Map.Entry::getKey).toList();
    }

    /** The context's tar, decompressed, as text (names and contents are plain in it). */
    private static String gunzipped(JsonNode body) throws IOException {
        byte[] gzip = Base64.getDecoder().decode(body.get("context").asText());
        try (var in = new GZIPInputStream(new ByteArrayInputStream(gzip))) {
            return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
        }
    }
}
