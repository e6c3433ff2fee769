package io.stasis.sdk;

import static io.stasis.sdk.FakeApi.respond;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Template builds: the request's JSON, the view's fields, logs, waiting for a build, and deleting. */
class TemplatesTest {
    static final String BUILDING = """
            {"name": "app", "description": "", "status": "building",
             "build": {"status": "building", "from": "base", "step": 0, "steps": 3, "cachedSteps": 0,
                       "startedAt": "2026-11-29T10:00:00Z"}}""";
    static final String READY = """
            {"name": "app", "description": "", "status": "ready", "version": "2", "builtAt": "2026-11-29T10:01:00Z",
             "sizeBytes": 4096, "from": "base", "env": {"PIP_NO_CACHE_DIR": "1"}, "workdir": "/app", "cmd": ["python3", "main.py"],
             "build": {"status": "ready", "from": "base", "step": 3, "steps": 3, "cachedSteps": 1,
                       "startedAt": "2026-11-29T10:00:00Z", "endedAt": "2026-11-29T10:01:00Z"}}""";
    static final String FAILED = """
            {"name": "app", "description": "", "status": "failed", "version": "1", "from": "base",
             "build": {"status": "failed", "from": "base", "step": 2, "steps": 3, "cachedSteps": 0,
                       "startedAt": "2026-11-29T10:00:00Z", "endedAt": "2026-11-29T10:00:30Z",
                       "failure": {"step": 2, "instruction": "RUN make", "exitCode": 2,
                                   "message": "step 2 (RUN make) exited with 2",
                                   "output": "# step 2/3: RUN make\\ncc -o app app.c\\napp.c:1: error: expected ';'\\n# step 2 failed: exited with 2\\n"}}}""";

    @AutoClose
    final FakeApi api = FakeApi.start();

    @AutoClose
    final StasisClient client = api.client();

    @TempDir
    Path dir;

    @Test
    void aBuildFromStepsSendsThemInOrder() {
        api.json("POST /v1/templates", 202, BUILDING);
        TemplateInfo started = client.templates().build(TemplateBuildRequest.builder("app").from("base")
                .env("PIP_NO_CACHE_DIR", "1")
                .workdir("/app")
                .user("root")
                .run("apt-get install -y make")
                .run("make", Duration.ofMinutes(5))
                .cmd("python3", "main.py")
                .resources(new Resources(2.0, 2048, null))
                .network(NetworkPolicy.builder().allow("deb.debian.org").build())
                .build());
        assertThat(started.isBuilding()).isTrue();
        assertThat(started.build().steps()).isEqualTo(3);
        assertThat(api.last().bodyText()).isEqualTo("{\"name\":\"app\",\"from\":\"base\",\"steps\":["
                + "{\"env\":{\"PIP_NO_CACHE_DIR\":\"1\"}},{\"workdir\":\"/app\"},{\"user\":\"root\"},"
                + "{\"run\":\"apt-get install -y make\"},{\"run\":\"make\",\"timeoutMs\":300000}],"
                + "\"cmd\":[\"python3\",\"main.py\"],\"resources\":{\"cpus\":2.0,\"memoryMb\":2048},"
                + "\"network\":{\"egress\":{\"default\":\"deny\",\"allow\":[\"deb.debian.org\"],\"deny\":[]}}}");
    }

    @Test
    void aDockerfileBuildSendsTheTextAndTheContextInBase64() throws Exception {
        api.json("POST /v1/templates", 202, BUILDING);
        Files.writeString(dir.resolve("main.py"), "print('hi')\n");
        var request = TemplateBuildRequest.builder("app").dockerfile("FROM base\nCOPY main.py /app/\n").contextDirectory(dir).build();
        client.templates().build(request);

        var body = Wire.MAPPER.readTree(api.last().body());
        assertThat(body.properties().stream().map(Map.Entry::getKey).toList()).containsExactly("name", "dockerfile", "context");
        assertThat(body.get("dockerfile").asText()).isEqualTo("FROM base\nCOPY main.py /app/\n");
        byte[] context = Base64.getDecoder().decode(body.get("context").asText());
        assertThat(context).isEqualTo(request.context()).hasSize(request.contextBytes());
        assertThat(TarEntries.read(context)).extracting(TarEntries.Entry::name).containsExactly("./", "./main.py");
    }

    @Test
    void copyStepsSendARawContextAsGiven() {
        api.json("POST /v1/templates", 202, BUILDING);
        byte[] tar = {1, 2, 3};
        client.templates().build(TemplateBuildRequest.builder("app").from("tiny").copy(".", "/app").context(tar).build());
        assertThat(api.last().bodyText()).isEqualTo("{\"name\":\"app\",\"from\":\"tiny\",\"steps\":[{\"copy\":{\"src\":\".\",\"dest\":\"/app\"}}],"
                + "\"context\":\"AQID\"}");
    }

    @Test
    void aPrebootSendsItsCommandsAndTheViewShowsThem() {
        api.json("POST /v1/templates", 202, BUILDING);
        client.templates().build(TemplateBuildRequest.builder("api").dockerfile("FROM base\n")
                .preboot("python3 -m http.server 8000", "curl -sf http://127.0.0.1:8000/", Duration.ofMinutes(2)).build());
        assertThat(api.last().bodyText()).isEqualTo("{\"name\":\"api\",\"dockerfile\":\"FROM base\\n\","
                + "\"startCmd\":\"python3 -m http.server 8000\",\"readyCmd\":\"curl -sf http://127.0.0.1:8000/\",\"readyTimeoutMs\":120000}");
        assertThatThrownBy(() -> TemplateBuildRequest.builder("api").from("base").preboot("server", " "))
                .hasMessage("a pre-boot needs a ready command: one that exits 0 once 'server' is ready");

        api.json("GET /v1/templates/api", 200, """
                {"name": "api", "description": "", "status": "ready", "version": "1", "from": "base",
                 "startCmd": "python3 -m http.server 8000", "readyCmd": "curl -sf http://127.0.0.1:8000/"}""");
        TemplateInfo warm = client.templates().get("api");
        assertThat(warm.isPrebooted()).isTrue();
        assertThat(warm.startCmd()).isEqualTo("python3 -m http.server 8000");
        assertThat(warm.readyCmd()).isEqualTo("curl -sf http://127.0.0.1:8000/");
        assertThat(warm.cmd()).isEmpty();
    }

    @Test
    void theBuilderRefusesADockerfileBesideFromStepsOrCmd() {
        assertThatThrownBy(() -> TemplateBuildRequest.builder("app").from("base").dockerfile("FROM tiny"))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("from was already set to 'base': a Dockerfile names its own FROM");
        assertThatThrownBy(() -> TemplateBuildRequest.builder("app").dockerfile("FROM tiny").run("true"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("a dockerfile was already set");
        assertThatThrownBy(() -> TemplateBuildRequest.builder("app").dockerfile("FROM tiny").from("base"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("its FROM names the template to build on");
        assertThatThrownBy(() -> TemplateBuildRequest.builder("app").cmd("sh").dockerfile("FROM tiny"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cmd was already set to [sh]");
        assertThatThrownBy(() -> TemplateBuildRequest.builder("app").run("true").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("give the template to build on (from) or a dockerfile");
        assertThatThrownBy(() -> new BuildStep.Run("true", Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new BuildStep.Env(Map.of())).hasMessage("an env step sets at least one variable");
        assertThatThrownBy(() -> TemplateBuildRequest.builder("app").context(new byte[TemplateBuildRequest.MAX_CONTEXT_BYTES + 1]))
                .hasMessageContaining("the server takes at most 33554432");
    }

    @Test
    void theViewCarriesTheBuildAndWhatItSet() {
        api.json("GET /v1/templates/app", 200, READY);
        TemplateInfo app = client.templates().get("app");
        assertThat(app.isReady()).isTrue();
        assertThat(app.from()).isEqualTo("base");
        assertThat(app.env()).containsExactly(Map.entry("PIP_NO_CACHE_DIR", "1"));
        assertThat(app.workdir()).isEqualTo("/app");
        assertThat(app.cmd()).containsExactly("python3", "main.py");
        assertThat(app.build()).isEqualTo(new TemplateInfo.Build("ready", "base", 3, 3, 1, Instant.parse("2026-11-29T10:00:00Z"),
                Instant.parse("2026-11-29T10:01:00Z"), null));
        assertThat(app.failure()).isNull();
        assertThat(app.isPrebooted()).isFalse();
    }

    @Test
    void aServiceTemplateHasEmptyEnvAndCmdAndItsJsonLeavesOutWhatTheServerDid() {
        api.json("GET /v1/templates/tiny", 200, """
                {"name": "tiny", "description": "busybox", "status": "ready", "version": "1", "builtAt": "2026-11-29T10:00:00Z",
                 "sizeBytes": 2200000}""");
        TemplateInfo tiny = client.templates().get("tiny");
        assertThat(tiny.env()).isEmpty();
        assertThat(tiny.cmd()).isEmpty();
        assertThat(tiny.build()).isNull();
        assertThat(StasisJson.write(tiny).replaceAll("\\s", "")).isEqualTo("{\"name\":\"tiny\",\"description\":\"busybox\",\"status\":\"ready\","
                + "\"version\":\"1\",\"builtAt\":\"2026-11-29T10:00:00Z\",\"sizeBytes\":2200000}");
        assertThat(api.last().path()).isEqualTo("/v1/templates/tiny");
    }

    @Test
    void theFailureIsReadAndItsJsonWrittenBack() throws Exception {
        api.json("GET /v1/templates/app", 200, FAILED);
        TemplateInfo app = client.templates().get("app");
        assertThat(app.isFailed()).isTrue();
        assertThat(app.failure()).satisfies(f -> {
            assertThat(f.step()).isEqualTo(2);
            assertThat(f.instruction()).isEqualTo("RUN make");
            assertThat(f.exitCode()).isEqualTo(2);
            assertThat(f.outputTail(2)).isEqualTo("app.c:1: error: expected ';'\n# step 2 failed: exited with 2");
            assertThat(f.outputTail(99)).startsWith("# step 2/3: RUN make\n");
        });
        assertThat(Wire.MAPPER.readTree(StasisJson.write(app))).isEqualTo(Wire.MAPPER.readTree(FAILED));
    }

    @Test
    void logsAreReadFromAnOffset() {
        api.json("GET /v1/templates/app/logs", 200, "{\"start\": 10, \"output\": \"make\\n\", \"next\": 15, \"done\": false}");
        TemplateLog log = client.templates().logs("app", 4);
        assertThat(log).isEqualTo(new TemplateLog(10, "make\n", 15, false));
        assertThat(log.droppedAfter(4)).isEqualTo(6);
        assertThat(api.last().query()).isEqualTo("offset=4");
    }

    @Test
    void followingReadsOnUntilTheBuildIsDone() {
        var reads = new AtomicInteger();
        api.on("GET /v1/templates/app/logs", (request, exchange) -> respond(exchange, 200, "application/json", switch (reads.incrementAndGet()) {
            case 1 -> "{\"start\": 0, \"output\": \"# step 1/2\\n\", \"next\": 11, \"done\": false}";
            case 2 -> "{\"start\": 11, \"output\": \"\", \"next\": 11, \"done\": false}"; // the server's 10 s passed
            case 3 -> "{\"start\": 11, \"output\": \"ok\\n\", \"next\": 14, \"done\": false}";
            default -> "{\"start\": 14, \"output\": \"\", \"next\": 14, \"done\": true}";
        }));
        var seen = new ArrayList<TemplateLog>();
        long end = client.templates().followLogs("app", 0, seen::add);
        assertThat(end).isEqualTo(14);
        assertThat(seen).extracting(TemplateLog::output).containsExactly("# step 1/2\n", "ok\n");
        assertThat(api.requests).extracting(FakeApi.Request::query)
                .containsExactly("offset=0&follow=true", "offset=11&follow=true", "offset=11&follow=true", "offset=14&follow=true");
    }

    @Test
    void awaitingABuildReturnsItReady() {
        var reads = new AtomicInteger();
        api.on("GET /v1/templates/app", (request, exchange) -> respond(exchange, 200, "application/json",
                reads.incrementAndGet() == 1 ? BUILDING : READY));
        var polled = new ArrayList<TemplateInfo>();
        TemplateInfo app = client.templates().awaitBuild("app", Duration.ofMinutes(1), polled::add);
        assertThat(app.isReady()).isTrue();
        assertThat(app.version()).isEqualTo("2");
        assertThat(polled).singleElement().satisfies(t -> assertThat(t.isBuilding()).isTrue());
    }

    @Test
    void awaitingAFailedBuildThrowsWithWhereAndWhy() {
        api.json("GET /v1/templates/app", 200, FAILED);
        assertThatThrownBy(() -> client.templates().awaitBuild("app", null))
                .isInstanceOfSatisfying(TemplateBuildException.class, e -> {
                    assertThat(e.failure().exitCode()).isEqualTo(2);
                    assertThat(e.template().version()).as("the previous version stays").isEqualTo("1");
                })
                .hasMessage("""
                        template app failed at step 2 of 3 (RUN make), exit code 2: step 2 (RUN make) exited with 2
                        # step 2/3: RUN make
                        cc -o app app.c
                        app.c:1: error: expected ';'
                        # step 2 failed: exited with 2""");
    }

    @Test
    void aServiceTemplatesFailureIsItsMessage() {
        api.json("GET /v1/templates/base", 200, """
                {"name": "base", "description": "debian", "status": "failed", "version": "3", "message": "debootstrap: no network"}""");
        assertThatThrownBy(() -> client.templates().awaitBuild("base", null))
                .isInstanceOf(TemplateBuildException.class).hasMessage("template base failed: debootstrap: no network");
    }

    @Test
    void awaitingGivesTheTemplateStillBuildingWhenTheTimeRunsOut() {
        api.json("GET /v1/templates/app", 200, BUILDING);
        assertThat(client.templates().awaitBuild("app", Duration.ZERO).isBuilding()).isTrue();
        assertThat(client.templates().awaitBuild("app", Duration.ofMillis(300)).isBuilding()).isTrue();
    }

    @Test
    void deleteIsRefusedWhileSandboxesUseTheTemplate() {
        api.on("DELETE /v1/templates/app", (request, exchange) -> respond(exchange, 204, null, new byte[0]));
        client.templates().delete("app");
        assertThat(api.last().method()).isEqualTo("DELETE");

        api.json("DELETE /v1/templates/app", 409, """
                {"error": {"code": "template_in_use", "message": "template 'app' is used by 1 sandbox(es): sbx_1; delete them first",
                           "details": {"template": "app", "sandboxes": 1}}}""");
        assertThatThrownBy(() -> client.templates().delete("app"))
                .isInstanceOfSatisfying(ConflictException.class, e -> {
                    assertThat(e.code()).isEqualTo("template_in_use");
                    assertThat(e.details()).containsEntry("sandboxes", 1);
                });
    }

    @Test
    void aNameIsOnePathSegment() {
        assertThatThrownBy(() -> client.templates().get("a b/c")).isInstanceOf(NotFoundException.class);
        assertThat(api.last().path()).isEqualTo("/v1/templates/a%20b%2Fc");
    }
}
