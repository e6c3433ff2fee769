package io.stasis.sdk;

import static io.stasis.sdk.FakeApi.respond;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class StasisClientTest {
    static final String SANDBOX = """
            {"id": "sbx_0f3k2m9x8c7v6b5n", "name": "my-agent", "template": "base", "state": "running",
             "stateReason": null, "createdAt": "2026-11-29T10:00:00Z",
             "resources": {"cpus": 1.0, "memoryMb": 1024, "pids": 512},
             "env": {"FOO": "bar"}, "metadata": {"team": "x"}, "futureField": {"ignored": true}}""";

    private FakeApi api;
    private StasisClient client;

    @BeforeEach
    void start() throws IOException {
        api = new FakeApi();
        client = StasisClient.builder().url(api.url() + "/").apiKey("sk_test").requestTimeout(Duration.ofSeconds(5))
                .build();
    }

    @AfterEach
    void stop() {
        client.close();
        api.close();
    }

    static String sandbox(String id) {
        return SANDBOX.replace("sbx_0f3k2m9x8c7v6b5n", id);
    }

    @Test
    void createsWithoutSendingNullsAndReadsTheSandbox() {
        api.json("POST /v1/sandboxes", 201, SANDBOX);
        Sandbox s = client.sandboxes().create(CreateSandboxRequest.builder().template("tiny").name("my-agent")
                .env("FOO", "bar").memoryMb(256).build());
        assertThat(api.last().bodyText().replace(" ", ""))
                .isEqualTo("{\"template\":\"tiny\",\"name\":\"my-agent\",\"env\":{\"FOO\":\"bar\"},"
                        + "\"resources\":{\"memoryMb\":256}}");
        assertThat(api.last().header("Authorization")).isEqualTo("Bearer sk_test");
        assertThat(api.last().header("Content-Type")).isEqualTo("application/json");
        assertThat(s.id()).isEqualTo("sbx_0f3k2m9x8c7v6b5n");
        assertThat(s.name()).isEqualTo("my-agent");
        assertThat(s.isRunning()).isTrue();
        assertThat(s.stateReason()).isNull();
        assertThat(s.createdAt()).isEqualTo(Instant.parse("2026-11-29T10:00:00Z"));
        assertThat(s.resources()).isEqualTo(new Resources(1.0, 1024, 512));
        assertThat(s.env()).containsExactly(Map.entry("FOO", "bar"));
        assertThat(s.metadata()).containsExactly(Map.entry("team", "x"));
    }

    @Test
    void anEmptyCreateSendsAnEmptyObject() {
        api.json("POST /v1/sandboxes", 201, SANDBOX);
        client.sandboxes().create();
        assertThat(api.last().bodyText()).isEqualTo("{}");
    }

    @Test
    void getEncodesTheNameAndMapsNotFound() {
        api.json("GET /v1/sandboxes/my-agent", 200, SANDBOX);
        assertThat(client.sandboxes().get("my-agent").template()).isEqualTo("base");

        assertThatThrownBy(() -> client.sandboxes().get("a b/c"))
                .isInstanceOfSatisfying(NotFoundException.class, e -> {
                    assertThat(e.code()).isEqualTo("not_found");
                    assertThat(e.requestId()).startsWith("req_test");
                });
        assertThat(api.last().path()).isEqualTo("/v1/sandboxes/a%20b%2Fc");
    }

    @Test
    void listWalksEveryPageWithTheSameFilters() {
        api.on("GET /v1/sandboxes", (request, exchange) -> {
            String query = request.query();
            String body = query.contains("cursor=c2")
                    ? "{\"items\": [" + sandbox("sbx_3") + "], \"nextCursor\": null}"
                    : query.contains("cursor=c1")
                    ? "{\"items\": [], \"nextCursor\": \"c2\"}"
                    : "{\"items\": [" + sandbox("sbx_1") + "," + sandbox("sbx_2") + "], \"nextCursor\": \"c1\"}";
            respond(exchange, 200, "application/json", body);
        });
        Page<Sandbox> first = client.sandboxes().list(ListSandboxesRequest.builder().state("running")
                .metadata("team", "a b").metadata("x", "1").limit(2).build());
        assertThat(first.items()).extracting(Sandbox::id).containsExactly("sbx_1", "sbx_2");
        assertThat(first.nextCursor()).isEqualTo("c1");
        assertThat(first.stream().map(Sandbox::id).toList()).containsExactly("sbx_1", "sbx_2", "sbx_3");
        assertThat(api.requests).extracting(FakeApi.Request::query).containsExactly(
                "state=running&metadata.team=a%20b&metadata.x=1&limit=2",
                "state=running&metadata.team=a%20b&metadata.x=1&limit=2&cursor=c1",
                "state=running&metadata.team=a%20b&metadata.x=1&limit=2&cursor=c2");
        assertThat(first.nextPage().nextPage().hasNextPage()).isFalse();
    }

    @Test
    void deleteExpectsNoContent() {
        api.on("DELETE /v1/sandboxes/sbx_1", (r, e) -> respond(e, 204, null, ""));
        client.sandboxes().delete("sbx_1");
        assertThat(api.last().method()).isEqualTo("DELETE");
    }

    @Test
    void execSendsTheDocumentedBodyAndDecodesTheResult() {
        api.json("POST /v1/sandboxes/sbx_1/exec", 200, """
                {"exitCode": 137, "signal": "KILL", "stdout": "aGk=", "stderr": "/w==", "encoding": "base64",
                 "stdoutTruncated": true, "stderrTruncated": false, "timedOut": true, "durationMs": 1500}""");
        ExecResult r = client.sandboxes().exec("sbx_1", ExecRequest.builder("sh", "-c", "x").cwd("/tmp")
                .env("X", "1").stdin(new byte[] {(byte) 0xff, 0}).timeout(Duration.ofSeconds(1)).base64Output(true)
                .build());
        assertThat(api.last().bodyText()).isEqualTo("{\"cmd\":[\"sh\",\"-c\",\"x\"],\"cwd\":\"/tmp\","
                + "\"env\":{\"X\":\"1\"},\"stdin\":\"/wA=\",\"stdinEncoding\":\"base64\",\"encoding\":\"base64\","
                + "\"timeoutMs\":1000}");
        assertThat(r.exitCode()).isEqualTo(137);
        assertThat(r.signal()).isEqualTo("KILL");
        assertThat(r.stdout()).isEqualTo("hi");
        assertThat(r.stderrBytes()).containsExactly(0xff);
        assertThat(r.stdoutTruncated()).isTrue();
        assertThat(r.timedOut()).isTrue();
        assertThat(r.succeeded()).isFalse();
        assertThat(r.duration()).isEqualTo(Duration.ofMillis(1500));
    }

    @Test
    void execWithOnlyACommandSendsOnlyTheCommand() {
        api.json("POST /v1/sandboxes/sbx_1/exec", 200, """
                {"exitCode": 0, "signal": null, "stdout": "1\\n", "stderr": "", "encoding": "utf-8",
                 "stdoutTruncated": false, "stderrTruncated": false, "timedOut": false, "durationMs": 3}""");
        api.json("GET /v1/sandboxes/sbx_1", 200, sandbox("sbx_1"));
        ExecResult r = client.sandboxes().get("sbx_1").exec("python3", "-c", "print(1)");
        assertThat(api.last().bodyText()).isEqualTo("{\"cmd\":[\"python3\",\"-c\",\"print(1)\"]}");
        assertThat(r.stdout()).isEqualTo("1\n");
        assertThat(r.succeeded()).isTrue();
        assertThat(StasisJson.write(r).replaceAll("\\s", "")).isEqualTo("{\"exitCode\":0,\"signal\":null,"
                + "\"stdout\":\"1\\n\",\"stderr\":\"\",\"encoding\":\"utf-8\",\"stdoutTruncated\":false,"
                + "\"stderrTruncated\":false,\"timedOut\":false,\"durationMs\":3}");
    }

    @Test
    void execStreamDeliversChunksAsTheyArrive() {
        var seen = new ArrayList<String>();
        api.on("POST /v1/sandboxes/sbx_1/exec", (request, exchange) -> {
            var out = FakeApi.startEvents(exchange);
            FakeApi.send(out, ": hi\r\n\r\nevent: stdout\r\ndata: {\"data\": \"hel");
            FakeApi.send(out, "lo\\n\", \"offset\": 6}\r\n\r\n");
            FakeApi.send(out, "event: stderr\ndata: {\"data\": \"/w==\", \"offset\": 1, \"encoding\": \"base64\"}\n\n");
            FakeApi.send(out, "event: stdout\ndata: {\"data\": \"w\u00f6rld\", \"offset\": 12}\n\n");
            FakeApi.send(out, "event: exit\ndata: {\"exitCode\": 3, \"signal\": null, \"timedOut\": false, "
                    + "\"durationMs\": 12}\n\n");
        });
        ExecResult r = client.sandboxes().execStream("sbx_1", ExecRequest.of("x"), new ExecOutputListener() {
            @Override
            public void onStdout(byte[] chunk) {
                seen.add("out:" + new String(chunk, StandardCharsets.UTF_8));
            }

            @Override
            public void onStderr(byte[] chunk) {
                seen.add("err:" + chunk.length);
            }
        });
        assertThat(api.last().header("Accept")).isEqualTo("text/event-stream");
        assertThat(seen).containsExactly("out:hello\n", "err:1", "out:w\u00f6rld");
        assertThat(r.exitCode()).isEqualTo(3);
        assertThat(r.stdout()).isEqualTo("hello\nw\u00f6rld");
        assertThat(r.stderrBytes()).containsExactly(0xff);
        assertThat(r.duration()).isEqualTo(Duration.ofMillis(12));
    }

    @Test
    void execStreamOutlivesTheRequestTimeoutOnceHeadersArrived() throws Exception {
        try (var slow = StasisClient.builder().url(api.url()).apiKey("k").requestTimeout(Duration.ofMillis(300))
                .build()) {
            api.on("POST /v1/sandboxes/sbx_1/exec", (request, exchange) -> {
                var out = FakeApi.startEvents(exchange);
                FakeApi.send(out, "event: stdout\ndata: {\"data\": \"a\", \"offset\": 1}\n\n");
                sleep(900); // stands for a command that is quiet for a while
                FakeApi.send(out, "event: exit\ndata: {\"exitCode\": 0, \"signal\": null, \"timedOut\": false, "
                        + "\"durationMs\": 900}\n\n");
            });
            ExecResult r = slow.sandboxes().execStream("sbx_1", ExecRequest.of("x"), ExecOutputListener.IGNORE);
            assertThat(r.stdout()).isEqualTo("a");
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void execStreamWithoutAnExitEventIsAConnectionError() {
        api.on("POST /v1/sandboxes/sbx_1/exec", (request, exchange) -> {
            var out = FakeApi.startEvents(exchange);
            FakeApi.send(out, "event: stdout\ndata: {\"data\": \"a\", \"offset\": 1}\n\n");
        });
        assertThatThrownBy(() -> client.sandboxes().execStream("sbx_1", ExecRequest.of("x"), ExecOutputListener.IGNORE))
                .isInstanceOf(StasisConnectionException.class).hasMessageContaining("ended before the exit event");
    }

    @Test
    void execStreamMapsErrorsBeforeTheCommandStarts() {
        api.json("POST /v1/sandboxes/sbx_1/exec", 409,
                "{\"error\": {\"code\": \"invalid_state\", \"message\": \"stopped\", \"details\": {}}}");
        assertThatThrownBy(() -> client.sandboxes().execStream("sbx_1", ExecRequest.of("x"), ExecOutputListener.IGNORE))
                .isInstanceOfSatisfying(ConflictException.class, e -> assertThat(e.code()).isEqualTo("invalid_state"));
    }

    @Test
    void execStreamAcceptsAPlainJsonAnswer() {
        api.json("POST /v1/sandboxes/sbx_1/exec", 200, """
                {"exitCode": 0, "signal": null, "stdout": "x", "stderr": "", "encoding": "utf-8",
                 "stdoutTruncated": false, "stderrTruncated": false, "timedOut": false, "durationMs": 3}""");
        var out = new ArrayList<String>();
        ExecResult r = client.sandboxes().execStream("sbx_1", ExecRequest.of("x"), new ExecOutputListener() {
            @Override
            public void onStdout(byte[] chunk) {
                out.add(new String(chunk, StandardCharsets.UTF_8));
            }
        });
        assertThat(out).containsExactly("x");
        assertThat(r.stdout()).isEqualTo("x");
    }

    @Test
    void timesOutWhenNoResponseComes() throws Exception {
        try (var impatient = StasisClient.builder().url(api.url()).apiKey("k").requestTimeout(Duration.ofMillis(200))
                .build()) {
            api.on("GET /v1/sandboxes/slow", (request, exchange) -> sleep(2000));
            assertThatThrownBy(() -> impatient.sandboxes().get("slow")).isInstanceOf(StasisTimeoutException.class)
                    .hasMessageContaining(api.url());
        }
    }

    @Test
    void aServerThatIsNotThereIsAConnectionError() throws IOException {
        int port;
        try (var socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        try (var nowhere = StasisClient.connect("http://127.0.0.1:" + port, "k")) {
            assertThatThrownBy(() -> nowhere.sandboxes().list())
                    .isInstanceOf(StasisConnectionException.class)
                    .isNotInstanceOf(StasisTimeoutException.class)
                    .hasMessageStartingWith("cannot connect to http://127.0.0.1:" + port + " (GET /v1/sandboxes)");
        }
    }

    @Test
    void filesRoundTrip() throws Exception {
        api.on("GET /v1/sandboxes/sbx_1/files", (r, e) -> respond(e, 200, "application/octet-stream",
                new byte[] {1, 2, 3}));
        api.json("PUT /v1/sandboxes/sbx_1/files", 200, """
                {"path": "/root/a.txt", "name": "a.txt", "type": "file", "size": 5, "mode": "0755",
                 "modifiedAt": "2026-11-29T10:00:00Z", "symlinkTarget": null}""");
        api.json("GET /v1/sandboxes/sbx_1/files/stat", 200, """
                {"path": "/l", "name": "l", "type": "symlink", "size": 3, "mode": "0777",
                 "modifiedAt": "2026-11-29T10:00:00Z", "symlinkTarget": "/etc", "other": 1}""");
        api.json("POST /v1/sandboxes/sbx_1/files/mkdir", 201, """
                {"path": "/d", "name": "d", "type": "dir", "size": 0, "mode": "0755",
                 "modifiedAt": "2026-11-29T10:00:00Z", "symlinkTarget": null}""");
        api.json("POST /v1/sandboxes/sbx_1/files/move", 200, """
                {"path": "/b", "name": "b", "type": "weird", "size": 0, "mode": "0644",
                 "modifiedAt": "2026-11-29T10:00:00Z", "symlinkTarget": null}""");
        api.on("DELETE /v1/sandboxes/sbx_1/files", (r, e) -> respond(e, 204, null, ""));
        SandboxFiles files = client.sandboxes().files("sbx_1");

        assertThat(files.read("/root/a b.txt")).containsExactly(1, 2, 3);
        assertThat(api.last().query()).isEqualTo("path=%2Froot%2Fa%20b.txt");
        try (InputStream in = files.readStream("/x")) {
            assertThat(in.readAllBytes()).containsExactly(1, 2, 3);
        }

        FileInfo written = files.write("/root/a.txt", "hello", "0755");
        assertThat(api.last().bodyText()).isEqualTo("hello");
        assertThat(api.last().query()).isEqualTo("path=%2Froot%2Fa.txt&mode=0755");
        assertThat(api.last().header("Content-Type")).isEqualTo("application/octet-stream");
        assertThat(written.isFile()).isTrue();
        assertThat(written.mode()).isEqualTo("0755");

        files.write("/s", new ByteArrayInputStream(new byte[100_000]));
        assertThat(api.last().body()).hasSize(100_000);
        assertThat(api.last().query()).isEqualTo("path=%2Fs");

        FileInfo link = files.stat("/l");
        assertThat(link.isSymlink()).isTrue();
        assertThat(link.symlinkTarget()).isEqualTo("/etc");

        assertThat(files.mkdir("/d", "0700").isDirectory()).isTrue();
        assertThat(api.last().query()).isEqualTo("path=%2Fd&mode=0700");

        assertThat(files.move("/a", "/b", true).type()).isEqualTo(FileType.OTHER);
        assertThat(api.last().bodyText()).isEqualTo("{\"from\":\"/a\",\"to\":\"/b\",\"overwrite\":true}");

        files.delete("/d", true);
        assertThat(api.last().query()).isEqualTo("path=%2Fd&recursive=true");

        assertThatThrownBy(() -> files.write("/x", "y", "rwx")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void uploadsAndDownloadsLocalFiles(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        byte[] content = new byte[300_000];
        new Random(7).nextBytes(content);
        var local = dir.resolve("in.bin");
        Files.write(local, content);
        api.json("PUT /v1/sandboxes/sbx_1/files", 200, """
                {"path": "/in.bin", "name": "in.bin", "type": "file", "size": 300000, "mode": "0644",
                 "modifiedAt": "2026-11-29T10:00:00Z", "symlinkTarget": null}""");
        api.on("GET /v1/sandboxes/sbx_1/files", (r, e) -> respond(e, 200, "application/octet-stream", content));
        SandboxFiles files = client.sandboxes().files("sbx_1");

        files.write("/in.bin", local);
        assertThat(api.last().body()).isEqualTo(content);
        var out = dir.resolve("out.bin");
        Files.writeString(out, "old");
        assertThat(files.download("/in.bin", out)).isEqualTo(content.length);
        assertThat(Files.readAllBytes(out)).isEqualTo(content);
        try (var left = Files.list(dir)) {
            assertThat(left.map(p -> p.getFileName().toString()).sorted().toList())
                    .containsExactly("in.bin", "out.bin");
        }
    }

    @Test
    void downloadOfAMissingFileLeavesNothingBehind(@org.junit.jupiter.api.io.TempDir Path dir) {
        api.json("GET /v1/sandboxes/sbx_1/files", 404,
                "{\"error\": {\"code\": \"file_not_found\", \"message\": \"no such file\", \"details\": {}}}");
        assertThatThrownBy(() -> client.sandboxes().files("sbx_1").download("/nope", dir.resolve("x")))
                .isInstanceOf(NotFoundException.class);
        assertThat(dir.toFile().list()).isEmpty();
    }

    @Test
    void existsTellsAMissingFileFromAMissingSandbox() {
        api.json("GET /v1/sandboxes/sbx_1/files/stat", 404,
                "{\"error\": {\"code\": \"file_not_found\", \"message\": \"no\", \"details\": {}}}");
        api.json("GET /v1/sandboxes/gone/files/stat", 404,
                "{\"error\": {\"code\": \"sandbox_not_found\", \"message\": \"no\", \"details\": {}}}");
        assertThat(client.sandboxes().files("sbx_1").exists("/x")).isFalse();
        assertThatThrownBy(() -> client.sandboxes().files("gone").exists("/x")).isInstanceOf(NotFoundException.class);
    }

    @Test
    void listsFilesAcrossPages() {
        String entry = """
                {"path": "/d/%s", "name": "%s", "type": "file", "size": 1, "mode": "0644",
                 "modifiedAt": "2026-11-29T10:00:00Z", "symlinkTarget": null}""";
        api.on("GET /v1/sandboxes/sbx_1/files/list", (request, exchange) -> respond(exchange, 200, "application/json",
                request.query().contains("cursor=n")
                        ? "{\"items\": [" + entry.formatted("b", "b") + "], \"nextCursor\": null}"
                        : "{\"items\": [" + entry.formatted("a", "a") + "], \"nextCursor\": \"n\"}"));
        List<FileInfo> all = client.sandboxes().files("sbx_1").list("/d");
        assertThat(all).extracting(FileInfo::name).containsExactly("a", "b");
    }

    @Test
    void templatesAndHealth() {
        api.json("GET /v1/templates", 200, """
                {"items": [{"name": "tiny", "description": "busybox", "status": "ready", "version": "1",
                            "builtAt": "2026-11-29T10:00:00Z", "sizeBytes": 2200000, "progress": null, "message": null},
                           {"name": "base", "description": "debian", "status": "building", "version": null,
                            "builtAt": null, "sizeBytes": null, "progress": 0.4, "message": "debootstrap"}],
                 "nextCursor": null}""");
        api.json("GET /healthz", 200, "{\"status\": \"ok\"}");
        List<TemplateInfo> templates = client.templates().list();
        assertThat(templates).extracting(TemplateInfo::name).containsExactly("tiny", "base");
        assertThat(templates.get(0).isReady()).isTrue();
        assertThat(templates.get(0).sizeBytes()).isEqualTo(2_200_000L);
        assertThat(templates.get(1).progress()).isEqualTo(0.4);
        assertThat(client.health().isOk()).isTrue();
        assertThat(api.last().header("Authorization")).isNull();
    }

    @Test
    void jsonOfASandboxIsTheApiShape() {
        api.json("GET /v1/sandboxes/sbx_1", 200, sandbox("sbx_1"));
        String json = StasisJson.write(client.sandboxes().get("sbx_1")).replaceAll("\\s", "");
        assertThat(json).isEqualTo("{\"id\":\"sbx_1\",\"name\":\"my-agent\",\"template\":\"base\",\"state\":\"running\","
                + "\"stateReason\":null,\"hibernation\":null,\"createdAt\":\"2026-11-29T10:00:00Z\",\"resources\":{\"cpus\":1.0,"
                + "\"memoryMb\":1024,\"pids\":512},\"env\":{\"FOO\":\"bar\"},\"metadata\":{\"team\":\"x\"},"
                + "\"parentId\":null,\"checkpointId\":null,\"lifecycle\":null,\"generation\":0}");
        assertThat(StasisJson.writeList(List.of()).replaceAll("\\s", "")).isEqualTo("{\"items\":[],\"nextCursor\":null}");
    }

    @Test
    void rejectsBadUrls() {
        assertThatThrownBy(() -> StasisClient.connect("ftp://x", "k")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> StasisClient.connect("127.0.0.1:7070", "k")).isInstanceOf(IllegalArgumentException.class);
        try (var ok = StasisClient.connect("http://127.0.0.1:7070///", "k")) {
            assertThat(ok.url()).isEqualTo("http://127.0.0.1:7070");
        }
    }
}
