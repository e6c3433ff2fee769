package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.stasis.testkit.Await;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Templates built from steps and from Dockerfiles, in real sandboxes on the busybox template: the
 * files and settings they give their sandboxes, the step cache, failing steps, versions, deletion,
 * tenants and bad input.
 */
@Tag("root")
class TemplateBuildsIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** A first build on base waits for base itself: a Debian bootstrap, minutes on a fresh host. */
    private static final Duration BUILD_WAIT = Duration.ofMinutes(15);
    private static ServiceFixture service;
    private static RawApi api;

    @BeforeAll
    static void start() throws Exception {
        service = ServiceFixture.start(AptMirror.ofHost().map(AptMirror::dnsFlags).orElse(List.of()).toArray(String[]::new));
        api = new RawApi(service.url, service.rootKey);
    }

    @AfterAll
    static void stop() {
        try {
            api.close();
        } finally {
            service.close();
        }
    }

    /** Builds and waits for the build to end; returns the template's view. */
    private static JsonNode build(String body) {
        var started = api.call("POST", "/v1/templates", body);
        assertThat(started.status()).as(started.body().toString()).isEqualTo(202);
        String name = started.body().get("name").asText();
        assertThat(started.body().get("status").asText()).isEqualTo("building");
        Await.until("build of " + name, BUILD_WAIT, () -> !api.get("/v1/templates/" + name).path("build").path("status").asText().equals("building"));
        return api.get("/v1/templates/" + name);
    }

    private static String sandbox(String template) {
        return api.post("/v1/sandboxes", "{\"template\": \"" + template + "\", \"lifecycle\": {\"pauseAfterIdle\": null}}").get("id").asText();
    }

    private static String context(Map<String, String> files) {
        try {
            Path dir = Files.createTempDirectory("stasis-context");
            try {
                for (var e : files.entrySet()) {
                    Path file = dir.resolve(e.getKey());
                    Files.createDirectories(file.getParent());
                    Files.writeString(file, e.getValue());
                }
                var tar = new ProcessBuilder("tar", "-c", "-C", dir.toString(), ".").redirectErrorStream(false).start();
                byte[] bytes = tar.getInputStream().readAllBytes();
                assertThat(tar.waitFor()).isZero();
                var gz = new ByteArrayOutputStream();
                try (var out = new GZIPOutputStream(gz)) {
                    out.write(bytes);
                }
                return Base64.getEncoder().encodeToString(gz.toByteArray());
            } finally {
                try (Stream<Path> walk = Files.walk(dir)) {
                    walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                }
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aTemplateBuiltFromStepsGivesItsSandboxesItsFilesAndVariables() {
        var files = new LinkedHashMap<String, String>();
        files.put("app/main.sh", "echo hello from the app\n");
        files.put("app/conf/settings", "mode=fast\n");
        files.put("README", "read me\n");
        var ready = build("""
                {"name": "app", "from": "tiny", "context": "%s", "steps": [
                  {"env": {"GREETING": "hi there", "MODE": "build"}},
                  {"workdir": "/srv/app"},
                  {"copy": {"src": "app", "dest": "."}},
                  {"copy": {"src": "README", "dest": "/docs/"}},
                  {"run": "echo \\"$GREETING\\" > greeting && pwd > where && echo step output on stderr >&2"}
                ]}""".formatted(context(files)));
        assertThat(ready.get("status").asText()).as(ready.toString()).isEqualTo("ready");
        assertThat(ready.get("version").asText()).isEqualTo("1");
        assertThat(ready.get("from").asText()).isEqualTo("tiny");
        assertThat(ready.get("workdir").asText()).isEqualTo("/srv/app");
        assertThat(ready.get("env").get("GREETING").asText()).isEqualTo("hi there");
        assertThat(ready.get("build").get("steps").asInt()).isEqualTo(5);
        assertThat(ready.get("build").get("cachedSteps").asInt()).isZero();
        assertThat(api.get("/v1/templates").get("items")).extracting(t -> t.get("name").asText()).contains("app")
                .noneMatch(n -> n.startsWith("_"));

        var log = api.get("/v1/templates/app/logs");
        assertThat(log.get("output").asText()).contains("step 5/5: RUN", "step output on stderr");
        assertThat(log.get("done").asBoolean()).isTrue();
        assertThat(api.get("/v1/templates/app/logs?offset=" + log.get("next").asLong()).get("output").asText()).isEmpty();

        String id = sandbox("app");
        assertThat(api.sh(id, "cat /srv/app/main.sh /srv/app/conf/settings /docs/README /srv/app/greeting /srv/app/where"))
                .isEqualTo("echo hello from the app\nmode=fast\nread me\nhi there\n/srv/app\n");
        assertThat(api.sh(id, "echo $GREETING-$MODE")).isEqualTo("hi there-build\n");
        // A create's own variables win over the template's.
        String own = api.post("/v1/sandboxes", "{\"template\": \"app\", \"env\": {\"MODE\": \"mine\"}}").get("id").asText();
        assertThat(api.sh(own, "echo $MODE")).isEqualTo("mine\n");
        // No build sandbox is left.
        assertThat(api.get("/v1/sandboxes").get("items")).extracting(s -> s.path("metadata").path("stasis.build").asText(""))
                .containsOnly("");
        api.call("DELETE", "/v1/sandboxes/" + id, null);
        api.call("DELETE", "/v1/sandboxes/" + own, null);
    }

    @Test
    void aRebuildRunsOnlyTheStepsFromTheFirstChangeAndOlderSandboxesKeepTheirVersion() {
        String steps = """
                {"name": "cached", "from": "tiny", "steps": [
                  {"run": "echo one > /one && sleep 1"},
                  {"run": "date +%%s%%N > /two"},
                  {"run": "echo %s > /three"}
                ]}""";
        var first = build(steps.formatted("first"));
        assertThat(first.get("version").asText()).isEqualTo("1");
        String v1 = sandbox("cached");
        String two = api.sh(v1, "cat /two");

        var second = build(steps.formatted("second"));
        assertThat(second.get("status").asText()).isEqualTo("ready");
        assertThat(second.get("version").asText()).isEqualTo("2");
        assertThat(second.get("build").get("cachedSteps").asInt()).isEqualTo(2);
        assertThat(api.get("/v1/templates/cached/logs").get("output").asText()).contains("step 1 (cached)", "step 2 (cached)", "step 3/3");
        String v2 = sandbox("cached");
        assertThat(api.sh(v2, "cat /two /three")).isEqualTo(two + "second\n"); // step 2 did not run again
        assertThat(api.sh(v1, "cat /three")).isEqualTo("first\n");

        // The same steps again: everything cached.
        var third = build(steps.formatted("second"));
        assertThat(third.get("build").get("cachedSteps").asInt()).isEqualTo(3);
        assertThat(third.get("version").asText()).isEqualTo("3");
        for (String id : new String[] {v1, v2}) api.call("DELETE", "/v1/sandboxes/" + id, null);
    }

    /** A real build: Debian's apt from the mirror the host uses (the one address outside this host a test reaches), on base with git. */
    @Test
    void aBuildOnBaseInstallsPackagesWithAptAndBaseHasGit() {
        assumeTrue(AptMirror.ofHost().isPresent(), "this host's apt names a mirror it can resolve");
        var ready = build(JSON.createObjectNode().put("name", "with-jq").put("dockerfile", """
                FROM base
                RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends jq \\
                 && rm -rf /var/lib/apt/lists/*
                RUN git --version > /git-version
                """).toString());
        assertThat(ready.get("status").asText()).as(ready.toString()).isEqualTo("ready");
        String id = sandbox("with-jq");
        assertThat(api.sh(id, "echo '{\"a\": 42}' | jq .a")).isEqualTo("42\n");
        assertThat(api.sh(id, "cat /git-version")).startsWith("git version 2.");
        api.call("DELETE", "/v1/sandboxes/" + id, null);
    }

    @Test
    void versionsAreKeptSandboxesRecordTheirsAndAnOlderOneCanBeNamed() {
        String steps = "{\"name\": \"versioned\", \"from\": \"tiny\", \"steps\": [{\"run\": \"echo %d > /v\"}]}";
        assertThat(build(steps.formatted(1)).get("version").asText()).isEqualTo("1");
        String first = sandbox("versioned");
        assertThat(api.get("/v1/sandboxes/" + first).get("template").asText()).isEqualTo("versioned@1");
        assertThat(build(steps.formatted(2)).get("version").asText()).isEqualTo("2");
        String second = sandbox("versioned");
        assertThat(api.get("/v1/sandboxes/" + second).get("template").asText()).isEqualTo("versioned@2");
        assertThat(api.sh(second, "cat /v")).isEqualTo("2\n");
        String older = sandbox("versioned@1");
        assertThat(api.sh(older, "cat /v")).isEqualTo("1\n");
        var versions = api.get("/v1/templates/versioned/versions").get("items");
        assertThat(versions).extracting(v -> v.get("template").asText()).containsExactly("versioned@2", "versioned@1");
        assertThat(versions).extracting(v -> v.get("sandboxes").asInt()).containsExactly(1, 2);
        assertThat(service.client.templates().versions("versioned")).extracting(io.stasis.sdk.TemplateVersion::template)
                .containsExactly("versioned@2", "versioned@1");
        assertThat(api.get("/v1/templates").get("items")).extracting(t -> t.get("name").asText()).contains("versioned")
                .doesNotContain("versioned@1", "versioned@2");
        assertThat(api.call("DELETE", "/v1/templates/versioned", null).errorCode()).isEqualTo("template_in_use");

        // The newest five are kept, and an older one while a sandbox was made from it.
        api.call("DELETE", "/v1/sandboxes/" + second, null);
        api.call("DELETE", "/v1/sandboxes/" + older, null);
        for (int v = 3; v <= 8; v++) assertThat(build(steps.formatted(v)).get("version").asText()).isEqualTo(Integer.toString(v));
        assertThat(api.get("/v1/templates/versioned/versions").get("items")).extracting(v -> v.get("template").asText())
                .containsExactly("versioned@8", "versioned@7", "versioned@6", "versioned@5", "versioned@4", "versioned@1");
        api.call("DELETE", "/v1/sandboxes/" + first, null);
        assertThat(api.call("DELETE", "/v1/templates/versioned", null).status()).isEqualTo(204);
        assertThat(api.call("GET", "/v1/templates/versioned/versions", null).status()).isEqualTo(404);
        assertThat(api.call("POST", "/v1/sandboxes", "{\"template\": \"versioned@8\"}").errorCode()).isEqualTo("template_not_found");
    }

    @Test
    void aFailingStepIsReportedWithItsExitCodeAndOutputAndThePreviousVersionStays() {
        assertThat(build("{\"name\": \"flaky\", \"from\": \"tiny\", \"steps\": [{\"run\": \"echo good > /ok\"}]}").get("status").asText())
                .isEqualTo("ready");
        var failed = build("""
                {"name": "flaky", "from": "tiny", "steps": [
                  {"run": "echo good > /ok"},
                  {"run": "echo about to fail; echo the reason >&2; exit 3"},
                  {"run": "echo never"}
                ]}""");
        assertThat(failed.get("status").asText()).isEqualTo("failed");
        var failure = failed.get("build").get("failure");
        assertThat(failure.get("step").asInt()).isEqualTo(2);
        assertThat(failure.get("exitCode").asInt()).isEqualTo(3);
        assertThat(failure.get("instruction").asText()).startsWith("RUN echo about to fail");
        assertThat(failure.get("output").asText()).contains("about to fail", "the reason");
        assertThat(failure.get("message").asText()).contains("step 2", "exited with 3");
        assertThat(failed.get("version").asText()).isEqualTo("1"); // the installed version is still there
        String id = sandbox("flaky");
        assertThat(api.sh(id, "cat /ok")).isEqualTo("good\n");
        api.call("DELETE", "/v1/sandboxes/" + id, null);
    }

    @Test
    void aDockerfileBuildsTheSameWayAndUnsupportedInstructionsAreNamed() {
        String dockerfile = """
                FROM tiny
                # a comment
                ENV APP_HOME=/opt/app \\
                    LEVEL=3
                WORKDIR $APP_HOME
                COPY hello.txt ./
                RUN echo "level $LEVEL" > level.txt \\
                 && cat hello.txt >> level.txt
                CMD ["sh", "-c", "cat level.txt"]
                """;
        var body = JSON.createObjectNode().put("name", "docker").put("dockerfile", dockerfile)
                .put("context", context(Map.of("hello.txt", "hello\n")));
        var ready = build(body.toString());
        assertThat(ready.get("status").asText()).as(ready.toString()).isEqualTo("ready");
        assertThat(ready.get("cmd")).extracting(JsonNode::asText).containsExactly("sh", "-c", "cat level.txt");
        String id = sandbox("docker");
        assertThat(api.sh(id, "cat /opt/app/level.txt")).isEqualTo("level 3\nhello\n");
        api.call("DELETE", "/v1/sandboxes/" + id, null);

        var refused = api.call("POST", "/v1/templates", JSON.createObjectNode().put("name", "bad")
                .put("dockerfile", "FROM tiny\nRUN true\nADD https://example.invalid/x /x\n").toString());
        assertThat(refused.status()).isEqualTo(422);
        assertThat(refused.body().get("error").get("message").asText()).contains("line 3", "ADD");
    }

    /** The cached steps a template's builds left: hidden templates whose metadata names it. */
    private static long layersOf(String template) throws IOException {
        try (Stream<Path> files = Files.list(service.dataDir.resolve("btrfs/templates"))) {
            long count = 0;
            for (Path p : files.filter(p -> p.getFileName().toString().matches("_[0-9a-f]+\\.json")).toList())
                if (JSON.readTree(p.toFile()).path("layerOf").asText().equals(template)) count++;
            return count;
        }
    }

    @Test
    void stepsAfterUserRunAsThatUserAndExecsCanAskForOne() {
        var ready = build(JSON.createObjectNode().put("name", "with-user").put("dockerfile", """
                FROM tiny
                RUN echo 'app:x:1000:1000::/home/app:/bin/sh' >> /etc/passwd && echo 'app:x:1000:' >> /etc/group \\
                 && mkdir -p /home/app && chown 1000:1000 /home/app
                USER app
                WORKDIR /home/app
                RUN id -u > uid && touch mine && echo $HOME > home
                """).toString());
        assertThat(ready.get("status").asText()).as(ready.toString()).isEqualTo("ready");
        assertThat(ready.get("user").asText()).isEqualTo("app");
        String id = sandbox("with-user");
        assertThat(api.sh(id, "cat /home/app/uid /home/app/home; stat -c %u:%g /home/app/mine")).isEqualTo("1000\n/home/app\n1000:1000\n");

        // The template's USER and WORKDIR are its sandboxes' defaults, as docker exec's; "root" on request.
        assertThat(api.sh(id, "id -un; pwd")).isEqualTo("app\n/home/app\n");
        var asRoot = api.post("/v1/sandboxes/" + id + "/exec", "{\"cmd\": [\"sh\", \"-c\", \"id -un\"], \"user\": \"root\"}");
        assertThat(asRoot.get("stdout").asText()).isEqualTo("root\n");
        // A build on it starts as its build ended: user, working directory and variables.
        var derived = build("{\"name\": \"on-user\", \"from\": \"with-user\", \"steps\": [{\"run\": \"id -un > who; pwd >> who\"}]}");
        assertThat(derived.get("status").asText()).as(derived.toString()).isEqualTo("ready");
        assertThat(derived.get("user").asText()).isEqualTo("app");
        String onUser = sandbox("on-user");
        assertThat(api.sh(onUser, "cat /home/app/who")).isEqualTo("app\n/home/app\n");
        api.call("DELETE", "/v1/sandboxes/" + onUser, null);
        var asApp = api.post("/v1/sandboxes/" + id + "/exec", "{\"cmd\": [\"sh\", \"-c\", \"id -un; pwd; echo $HOME $USER\"], \"user\": \"app\"}");
        assertThat(asApp.get("stdout").asText()).isEqualTo("app\n/home/app\n/home/app app\n");
        var byUid = api.post("/v1/sandboxes/" + id + "/exec", "{\"cmd\": [\"sh\", \"-c\", \"id -u; id -g\"], \"user\": \"4242:1000\"}");
        assertThat(byUid.get("stdout").asText()).isEqualTo("4242\n1000\n");
        var denied = api.post("/v1/sandboxes/" + id + "/exec", "{\"cmd\": [\"sh\", \"-c\", \"echo x > /root/x\"], \"user\": \"app\"}");
        assertThat(denied.get("exitCode").asInt()).isNotZero();
        var unknown = api.call("POST", "/v1/sandboxes/" + id + "/exec", "{\"cmd\": [\"id\"], \"user\": \"nosuch\"}");
        assertThat(unknown.status()).isEqualTo(422);
        assertThat(unknown.body().get("error").get("message").asText()).contains("nosuch");
        assertThat(api.call("POST", "/v1/sandboxes/" + id + "/exec", "{\"cmd\": [\"id\"], \"user\": \"../etc\"}").status()).isEqualTo(422);
        var process = api.post("/v1/sandboxes/" + id + "/processes", "{\"cmd\": [\"sh\", \"-c\", \"id -un > /tmp/who; sleep 60\"], \"user\": \"app\"}");
        Await.until("the process as app", Duration.ofSeconds(10), () -> api.sh(id, "cat /tmp/who 2>/dev/null").equals("app\n"));
        assertThat(process.get("pid").asLong()).isPositive();
        api.call("DELETE", "/v1/sandboxes/" + id, null);
    }

    @Test
    void aPrebootedTemplatesSandboxesStartWithItsProcessRunningAndReady() {
        var ready = build("""
                {"name": "served", "from": "tiny", "steps": [{"run": "mkdir -p /srv && echo pong > /srv/ping"}],
                 "startCmd": "date +%%s%%N > /tmp/started; (i=0; while true; do i=$((i+1)); echo $i > /tmp/count; sleep 0.1; done) & exec httpd -f -p 8080 -h /srv",
                 "readyCmd": "wget -q -O- http://127.0.0.1:8080/ping"}""".formatted());
        assertThat(ready.get("status").asText()).as(ready.toString()).isEqualTo("ready");
        assertThat(ready.get("startCmd").asText()).contains("httpd");
        assertThat(api.get("/v1/templates/served/logs").get("output").asText()).contains("waiting until ready", "keeping its running state");

        String a = api.post("/v1/sandboxes", "{\"template\": \"served\", \"name\": \"fork-a\", \"env\": {\"MINE\": \"a\"}, "
                + "\"metadata\": {\"who\": \"a\"}}").get("id").asText();
        String b = sandbox("served");
        // Nobody started the server in these sandboxes: it runs from the build's checkpoint, ready at once.
        assertThat(api.sh(a, "wget -q -O- http://127.0.0.1:8080/ping")).isEqualTo("pong\n");
        assertThat(api.sh(b, "wget -q -O- http://127.0.0.1:8080/ping")).isEqualTo("pong\n");
        assertThat(api.sh(a, "cat /tmp/started")).isEqualTo(api.sh(b, "cat /tmp/started"));
        long before = Long.parseLong(api.sh(a, "cat /tmp/count").strip());
        Await.until("the counter started by the build counts on in the fork", Duration.ofSeconds(10),
                () -> Long.parseLong(api.sh(a, "cat /tmp/count").strip()) > before);
        // Each is its own copy, with the create's own settings.
        api.sh(a, "echo changed > /srv/ping");
        assertThat(api.sh(b, "cat /srv/ping")).isEqualTo("pong\n");
        assertThat(api.sh(a, "echo $MINE")).isEqualTo("a\n");
        var shown = api.get("/v1/sandboxes/" + a);
        assertThat(shown.get("template").asText()).isEqualTo("served@1");
        assertThat(shown.get("name").asText()).isEqualTo("fork-a");
        assertThat(shown.get("metadata").get("who").asText()).isEqualTo("a");
        api.post("/v1/volumes", "{\"name\": \"pv\", \"sizeMb\": 64}");
        var withVolume = api.call("POST", "/v1/sandboxes", "{\"template\": \"served\", \"volumes\": [{\"volume\": \"pv\", \"path\": \"/v\"}]}");
        assertThat(withVolume.status()).isEqualTo(422);
        assertThat(withVolume.body().get("error").get("message").asText()).contains("pre-booted");
        api.call("DELETE", "/v1/volumes/pv", null);
        api.call("DELETE", "/v1/sandboxes/" + a, null);
        api.call("DELETE", "/v1/sandboxes/" + b, null);

        // Deleting the template deletes the sandbox that held its running state.
        String holder = holderOf("served");
        assertThat(api.get("/v1/sandboxes/" + holder).get("state").asText()).isEqualTo("stopped");
        assertThat(api.call("DELETE", "/v1/templates/served", null).status()).isEqualTo(204);
        assertThat(api.call("GET", "/v1/sandboxes/" + holder, null).status()).isEqualTo(404);
    }

    /** The stopped sandbox a pre-booted template's build left (its build's, with its checkpoint). */
    private static String holderOf(String template) {
        for (JsonNode s : api.get("/v1/sandboxes?state=stopped").get("items"))
            if (s.path("metadata").path("stasis.build").asText().equals(template)) return s.get("id").asText();
        throw new AssertionError("no holder sandbox of " + template);
    }

    @Test
    void aPrebootThatNeverGetsReadyOrWhoseProcessExitsFailsTheBuild() {
        var never = build("{\"name\": \"never\", \"from\": \"tiny\", \"startCmd\": \"sleep 600\", "
                + "\"readyCmd\": \"echo not yet; false\", \"readyTimeoutMs\": 2000}");
        assertThat(never.get("status").asText()).isEqualTo("failed");
        assertThat(never.get("build").get("failure").get("message").asText()).contains("not ready after 2 s");
        assertThat(never.get("build").get("failure").get("output").asText()).contains("not yet");
        var exits = build("{\"name\": \"exits\", \"from\": \"tiny\", \"startCmd\": \"echo giving up >&2; exit 4\", "
                + "\"readyCmd\": \"false\"}");
        assertThat(exits.get("status").asText()).isEqualTo("failed");
        assertThat(exits.get("build").get("failure").get("message").asText()).contains("exited (code 4)");
        assertThat(exits.get("build").get("failure").get("output").asText()).contains("giving up");
        assertThat(api.get("/v1/sandboxes").get("items")).extracting(s -> s.path("metadata").path("stasis.build").asText(""))
                .doesNotContain("never", "exits");
        assertThat(api.call("POST", "/v1/templates", "{\"name\": \"n\", \"from\": \"tiny\", \"readyCmd\": \"true\"}").status())
                .isEqualTo(422);
    }

    @Test
    void aTemplateInUseIsNotDeletedAndDeletingItRemovesItsCachedSteps() throws IOException {
        assertThat(layersOf("gone")).isZero();
        build("{\"name\": \"gone\", \"from\": \"tiny\", \"steps\": [{\"run\": \"touch /x\"}, {\"run\": \"touch /y\"}]}");
        assertThat(layersOf("gone")).isEqualTo(2);
        String id = sandbox("gone");
        var inUse = api.call("DELETE", "/v1/templates/gone", null);
        assertThat(inUse.status()).isEqualTo(409);
        assertThat(inUse.errorCode()).isEqualTo("template_in_use");
        assertThat(inUse.body().get("error").get("message").asText()).contains(id);
        api.call("DELETE", "/v1/sandboxes/" + id, null);
        assertThat(api.call("DELETE", "/v1/templates/gone", null).status()).isEqualTo(204);
        assertThat(api.call("GET", "/v1/templates/gone", null).status()).isEqualTo(404);
        assertThat(api.call("POST", "/v1/sandboxes", "{\"template\": \"gone\"}").errorCode()).isEqualTo("template_not_found");
        assertThat(layersOf("gone")).isZero();
        try (Stream<Path> left = Files.list(service.dataDir.resolve("btrfs/templates"))) {
            assertThat(left.map(p -> p.getFileName().toString())).noneMatch(n -> n.startsWith("gone"));
        }
        var builtin = api.call("DELETE", "/v1/templates/tiny", null);
        assertThat(builtin.status()).isEqualTo(409);
    }

    @Test
    void anotherTenantNeitherSeesNorUsesATenantsTemplate() {
        build("{\"name\": \"private\", \"from\": \"tiny\", \"steps\": [{\"run\": \"echo secret > /s\"}]}");
        var tenant = api.post("/v1/tenants", "{\"name\": \"other\"}");
        String key = api.post("/v1/tenants/" + tenant.get("id").asText() + "/keys", "{}").get("secret").asText();
        try (var other = new RawApi(service.url, key)) {
            assertThat(other.get("/v1/templates").get("items")).extracting(t -> t.get("name").asText()).doesNotContain("private")
                    .contains("tiny");
            assertThat(other.call("GET", "/v1/templates/private", null).status()).isEqualTo(404);
            assertThat(other.call("POST", "/v1/sandboxes", "{\"template\": \"private\"}").errorCode()).isEqualTo("template_not_found");
            assertThat(other.call("DELETE", "/v1/templates/private", null).status()).isEqualTo(404);
            var taken = other.call("POST", "/v1/templates", "{\"name\": \"private\", \"from\": \"tiny\", \"steps\": []}");
            assertThat(taken.errorCode()).isEqualTo("name_taken");
            assertThat(other.call("POST", "/v1/templates", "{\"name\": \"x\", \"from\": \"private\", \"steps\": []}").errorCode())
                    .isEqualTo("template_not_found");
        }
    }

    @Test
    void aRestartDeletesTheSandboxOfABuildItCutShortAndKeepsAPrebootedTemplatesHolder() throws Exception {
        var first = ServiceFixture.start();
        Path dataDir = first.dataDir;
        String building;
        String holder;
        try (var own = new RawApi(first.url, first.rootKey)) {
            own.post("/v1/templates", "{\"name\": \"kept\", \"from\": \"tiny\", \"startCmd\": \"exec sleep 600\", \"readyCmd\": \"true\"}");
            Await.until("the pre-booted build", BUILD_WAIT, () -> own.get("/v1/templates/kept").get("status").asText().equals("ready"));
            own.post("/v1/templates", "{\"name\": \"cut\", \"from\": \"tiny\", \"steps\": [{\"run\": \"sleep 600\"}]}");
            Await.until("the build's step to start", BUILD_WAIT, () -> own.get("/v1/templates/cut/logs").get("output").asText().contains("step 1/1"));
            building = null;
            holder = null;
            for (JsonNode s : own.get("/v1/sandboxes?state=running").get("items"))
                if (s.path("metadata").path("stasis.build").asText().equals("cut")) building = s.get("id").asText();
            for (JsonNode s : own.get("/v1/sandboxes?state=stopped").get("items"))
                if (s.path("metadata").path("stasis.build").asText().equals("kept")) holder = s.get("id").asText();
            assertThat(building).isNotNull();
            assertThat(holder).isNotNull();
        } finally {
            first.stopKeepingSandboxes();
        }
        try (var second = ServiceFixture.startIn(dataDir); var own = new RawApi(second.url, second.rootKey)) {
            assertThat(own.call("GET", "/v1/sandboxes/" + building, null).status()).isEqualTo(404);
            assertThat(own.get("/v1/sandboxes/" + holder).get("state").asText()).isEqualTo("stopped");
            assertThat(own.call("GET", "/v1/templates/cut", null).status()).isEqualTo(404); // its first build never ended
            String forked = own.post("/v1/sandboxes", "{\"template\": \"kept\"}").get("id").asText();
            assertThat(own.sh(forked, "ps | grep -q '[s]leep 600' && echo running")).isEqualTo("running\n");
        }
    }

    @Test
    void badBuildRequestsAreRefusedClearly() {
        Map<String, String> cases = new LinkedHashMap<>();
        cases.put("{\"name\": \"Bad Name\", \"from\": \"tiny\"}", "invalid_request");
        cases.put("{\"name\": \"_hidden\", \"from\": \"tiny\"}", "invalid_request");
        cases.put("{\"name\": \"tiny\", \"from\": \"tiny\"}", "name_taken");
        cases.put("{\"name\": \"n\", \"from\": \"nope\"}", "template_not_found");
        cases.put("{\"name\": \"n\"}", "invalid_request");
        cases.put("{\"name\": \"n\", \"from\": \"tiny\", \"steps\": [{\"run\": \"a\", \"env\": {\"A\": \"b\"}}]}", "invalid_request");
        cases.put("{\"name\": \"n\", \"from\": \"tiny\", \"steps\": [{\"copy\": {\"src\": \"a\", \"dest\": \"/b\"}}]}", "invalid_request");
        cases.put("{\"name\": \"n\", \"from\": \"tiny\", \"context\": \"eA==\", \"steps\": [{\"copy\": {\"src\": \"../a\", \"dest\": \"/b\"}}]}",
                "invalid_request");
        cases.put("{\"name\": \"n\", \"from\": \"tiny\", \"steps\": [{\"user\": \"no body\"}]}", "invalid_request");
        cases.put("{\"name\": \"n\", \"from\": \"tiny\", \"steps\": \"run\"}", "invalid_request");
        cases.put("{\"name\": \"n\", \"from\": \"tiny\", \"context\": \"***\"}", "invalid_request");
        cases.put("{\"name\": \"n\", \"dockerfile\": \"RUN true\"}", "invalid_request");
        cases.put("{\"name\": \"n\", \"from\": \"tiny\", \"steps\": [{\"run\": \"x\", \"timeoutMs\": -1}]}", "invalid_request");
        cases.put("null", "invalid_request");
        cases.forEach((body, code) -> {
            var answer = api.call("POST", "/v1/templates", body);
            assertThat(answer.status()).as(body + " -> " + answer.body()).isBetween(400, 499);
            assertThat(answer.errorCode()).as(body).isEqualTo(code);
        });
        assertThat(api.call("GET", "/v1/templates/nope", null).status()).isEqualTo(404);
        assertThat(api.call("GET", "/v1/templates/nope/logs", null).status()).isEqualTo(404);
        assertThat(api.call("DELETE", "/v1/templates/nope", null).status()).isEqualTo(404);
    }
}
