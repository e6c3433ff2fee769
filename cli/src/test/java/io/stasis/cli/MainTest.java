package io.stasis.cli;

import static io.stasis.cli.FakeServer.error;
import static io.stasis.cli.FakeServer.file;
import static io.stasis.cli.FakeServer.respond;
import static io.stasis.cli.FakeServer.sandbox;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MainTest {
    private FakeServer server;
    private Map<String, String> env;
    private InputStream stdin = InputStream.nullInputStream();
    private String out;
    private String err;
    private byte[] outBytes;

    @TempDir
    Path tmp;

    @BeforeEach
    void start() throws IOException {
        server = new FakeServer();
        env = Map.of("STASIS_URL", server.url(), "STASIS_API_KEY", "sk_env");
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private int run(String... args) {
        var outBuffer = new ByteArrayOutputStream();
        var errBuffer = new ByteArrayOutputStream();
        int code = Main.run(args, new PrintStream(outBuffer, true, StandardCharsets.UTF_8),
                new PrintStream(errBuffer, true, StandardCharsets.UTF_8), stdin, env);
        outBytes = outBuffer.toByteArray();
        out = outBuffer.toString(StandardCharsets.UTF_8);
        err = errBuffer.toString(StandardCharsets.UTF_8);
        return code;
    }

    // ---- global behaviour

    @Test
    void helpListsTheVerbsAndExitCodes() {
        assertThat(run("--help")).isZero();
        assertThat(out).contains("create", "list", "info", "exec", "rm", "cp", "templates", "pause", "resume",
                "hibernate", "stop", "start", "lifecycle", "checkpoint", "checkpoints", "rm-checkpoint", "fork", "events",
                "forks", "checkpoint-info", "files", "forget", "health", "metrics", "openapi", "completion", "tenant", "token", "blobs",
                "Exit codes:", "cannot connect", "124");
    }

    @Test
    void noVerbOrABadOptionIsAUsageError() {
        assertThat(run()).isEqualTo(2);
        assertThat(err).contains("Usage: stasis");
        assertThat(run("list", "--bogus")).isEqualTo(2);
        assertThat(err).contains("Unknown option: '--bogus'");
        assertThat(server.requests).isEmpty();
    }

    @Test
    void readsTheKeyFromTheDataDirWhenNoneIsGiven() throws IOException {
        Files.writeString(tmp.resolve("root.key"), "sk_file\n");
        server.json("GET /v1/templates", 200, "{\"items\": [], \"nextCursor\": null}");
        env = Map.of("STASIS_URL", server.url(), "STASIS_DATA_DIR", tmp.toString());
        assertThat(run("templates")).isZero();
        assertThat(server.requests.getLast().authorization()).isEqualTo("Bearer sk_file");

        env = Map.of("STASIS_URL", server.url());
        assertThat(run("--data-dir", tmp.toString(), "templates")).isZero();
        assertThat(server.requests.getLast().authorization()).isEqualTo("Bearer sk_file");

        assertThat(run("templates", "--api-key", "sk_flag", "--data-dir", tmp.toString())).isZero();
        assertThat(server.requests.getLast().authorization()).isEqualTo("Bearer sk_flag");
    }

    @Test
    void withoutAnyKeyItSaysWhereItLooked() {
        env = Map.of("STASIS_URL", server.url(), "STASIS_DATA_DIR", tmp.toString());
        assertThat(run("list")).isEqualTo(2);
        assertThat(err).isEqualTo("error: no API key: pass --api-key, set STASIS_API_KEY, or make "
                + tmp.resolve("root.key") + " readable (it does not exist)\n");
        assertThat(server.requests).isEmpty();
    }

    @Test
    void anApiErrorExitsWithItsKindsCodeAndPrintsCodeAndMessage() {
        server.json("GET /v1/sandboxes/nope", 404, error("sandbox_not_found", "no sandbox with id or name 'nope'"));
        assertThat(run("info", "nope")).isEqualTo(ExitCodes.NOT_FOUND);
        assertThat(err).isEqualTo("error: sandbox_not_found: no sandbox with id or name 'nope'\n");
        assertThat(out).isEmpty();
    }

    @Test
    void anUnreachableServerExitsThree() throws IOException {
        int port;
        try (var socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        assertThat(run("--url", "http://127.0.0.1:" + port, "list")).isEqualTo(3);
        assertThat(err).startsWith("error: cannot connect to http://127.0.0.1:" + port);
    }

    @Test
    void aBadUrlIsAUsageError() {
        assertThat(run("--url", "localhost:7070", "list")).isEqualTo(2);
        assertThat(err).contains("http(s)://host[:port]");
    }

    // ---- create, list, info, rm

    @Test
    void createPrintsTheIdAndSendsTheOptions() {
        server.json("POST /v1/sandboxes", 201, sandbox("sbx_new", "demo"));
        assertThat(run("create", "--template", "tiny", "--name", "demo", "--env", "A=1", "--env", "B=x=y",
                "--meta", "team=x", "--cpus", "0.5", "--memory-mb", "256", "--pids", "128", "--disk-mb", "2048")).isZero();
        assertThat(out).isEqualTo("sbx_new\n");
        assertThat(server.requests.getLast().text()).isEqualTo("{\"template\":\"tiny\",\"name\":\"demo\","
                + "\"env\":{\"A\":\"1\",\"B\":\"x=y\"},\"metadata\":{\"team\":\"x\"},"
                + "\"resources\":{\"cpus\":0.5,\"memoryMb\":256,\"pids\":128,\"diskMb\":2048}}");
        assertThat(server.requests.getLast().authorization()).isEqualTo("Bearer sk_env");

        assertThat(run("create")).isZero();
        assertThat(server.requests.getLast().text()).isEqualTo("{}");
    }

    @Test
    void createMountsBucketsAndRefusesABadSpecBeforeCallingTheServer() {
        server.json("POST /v1/sandboxes", 201, sandbox("sbx_new", "demo"));
        assertThat(run("create", "--mount", "endpoint=http://127.0.0.1:9000,bucket=data,prefix=2026,path=/data,secret=DATA_KEY,ro")).isZero();
        assertThat(server.requests.getLast().text()).isEqualTo("{\"mounts\":[{\"type\":\"s3\",\"endpoint\":\"http://127.0.0.1:9000\","
                + "\"bucket\":\"data\",\"prefix\":\"2026\",\"path\":\"/data\",\"readOnly\":true,\"credentialsSecret\":\"DATA_KEY\"}]}");
        int calls = server.requests.size();
        assertThat(run("create", "--mount", "bucket=data,path=/data")).isEqualTo(2);
        assertThat(err).contains("endpoint=");
        assertThat(server.requests).hasSize(calls);
    }

    @Test
    void jsonWorksBeforeOrAfterTheVerb() {
        server.json("POST /v1/sandboxes", 201, sandbox("sbx_new", "demo"));
        assertThat(run("--json", "create")).isZero();
        assertThat(out).contains("\"id\" : \"sbx_new\"", "\"stateReason\" : null");
        assertThat(run("create", "--json")).isZero();
        assertThat(out).contains("\"id\" : \"sbx_new\"");
    }

    @Test
    void listWalksAllPagesIntoOneTable() {
        server.on("GET /v1/sandboxes", (request, exchange) -> {
            String body = request.params().containsKey("cursor")
                    ? "{\"items\": [" + sandbox("sbx_3", null) + "], \"nextCursor\": null}"
                    : "{\"items\": [" + sandbox("sbx_1", "first") + "," + sandbox("sbx_22", "second-one")
                    + "], \"nextCursor\": \"c\"}";
            respond(exchange, 200, "application/json", body.getBytes(StandardCharsets.UTF_8));
        });
        assertThat(run("list", "--state", "running", "--meta", "team=x")).isZero();
        assertThat(out).isEqualTo("""
                ID       NAME         TEMPLATE   STATE     CREATED
                sbx_1    first        tiny       running   2026-11-29T10:00:00Z
                sbx_22   second-one   tiny       running   2026-11-29T10:00:00Z
                sbx_3    -            tiny       running   2026-11-29T10:00:00Z
                """);
        assertThat(server.requests.getFirst().params()).isEqualTo(Map.of("state", "running", "metadata.team", "x"));
        assertThat(server.requests.getLast().params()).containsEntry("cursor", "c");

        assertThat(run("list", "--json")).isZero();
        assertThat(out).contains("\"items\"", "sbx_1", "sbx_3", "\"nextCursor\" : null");
    }

    @Test
    void infoShowsOneSandbox() {
        server.json("GET /v1/sandboxes/demo", 200, sandbox("sbx_1", "demo"));
        assertThat(run("info", "demo")).isZero();
        assertThat(out).isEqualTo("""
                ID           sbx_1
                NAME         demo
                TEMPLATE     tiny
                RUNTIME      runc
                STATE        running
                GENERATION   -
                DURABLE      -
                PARENT       -
                CHECKPOINT   -
                CREATED      2026-11-29T10:00:00Z
                CPUS         0.5
                MEMORY       256 MiB
                PIDS         128
                DISK         2.0 GiB
                ENV          FOO=bar
                METADATA     team=x
                """);
    }

    @Test
    void infoShowsBucketMounts() {
        String withMounts = sandbox("sbx_1", "demo").replaceFirst("}$", ", \"mounts\": [{\"type\": \"s3\", \"endpoint\": \"http://127.0.0.1:9000\","
                + " \"region\": \"us-east-1\", \"bucket\": \"data\", \"prefix\": \"2026\", \"path\": \"/data\", \"readOnly\": true,"
                + " \"credentialsSecret\": \"DATA_KEY\"}]}");
        server.json("GET /v1/sandboxes/demo", 200, withMounts);
        assertThat(run("info", "demo")).isZero();
        assertThat(out).contains("MOUNTS       /data <- s3 http://127.0.0.1:9000/data/2026 (ro) key DATA_KEY\n");
    }

    @Test
    void rmDeletesEachAndReportsFailures() {
        server.on("DELETE /v1/sandboxes/a", (r, e) -> respond(e, 204, null, new byte[0]));
        server.json("DELETE /v1/sandboxes/b", 404, error("sandbox_not_found", "no sandbox b"));
        server.on("DELETE /v1/sandboxes/c", (r, e) -> respond(e, 204, null, new byte[0]));
        assertThat(run("rm", "a", "b", "c")).isEqualTo(ExitCodes.NOT_FOUND);
        assertThat(out).isEqualTo("a\nc\n");
        assertThat(err).isEqualTo("error: sandbox_not_found: no sandbox b\n");
        assertThat(run("rm", "a", "c")).isZero();
        assertThat(run("rm")).isEqualTo(2);
    }

    // ---- exec

    private void streamExec(String... events) {
        server.on("POST /v1/sandboxes/box/exec", (request, exchange) -> {
            exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
            exchange.sendResponseHeaders(200, 0);
            try (OutputStream body = exchange.getResponseBody()) {
                for (String event : events) {
                    body.write(event.getBytes(StandardCharsets.UTF_8));
                    body.flush();
                }
            }
        });
    }

    private static String chunk(String stream, String data) {
        return "event: " + stream + "\ndata: {\"data\": \"" + data + "\", \"offset\": 0}\n\n";
    }

    private static String exit(int code, boolean timedOut) {
        return "event: exit\ndata: {\"exitCode\": " + code + ", \"signal\": null, \"timedOut\": " + timedOut
                + ", \"durationMs\": 5}\n\n";
    }

    @Test
    void execStreamsBothOutputsAndExitsWithTheCommandsCode() {
        streamExec(chunk("stdout", "one\\n"), chunk("stderr", "warn\\n"), chunk("stdout", "two\\n"), exit(7, false));
        assertThat(run("exec", "box", "--", "sh", "-c", "echo one")).isEqualTo(7);
        assertThat(out).isEqualTo("one\ntwo\n");
        assertThat(err).isEqualTo("warn\n");
        var request = server.requests.getLast();
        assertThat(request.accept()).isEqualTo("text/event-stream");
        assertThat(request.text()).isEqualTo("{\"cmd\":[\"sh\",\"-c\",\"echo one\"]}");
    }

    @Test
    void execPassesBytesThrough() {
        server.on("POST /v1/sandboxes/box/exec", (request, exchange) -> {
            exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
            exchange.sendResponseHeaders(200, 0);
            try (OutputStream body = exchange.getResponseBody()) {
                body.write(("event: stdout\ndata: {\"data\": \"AP+A\", \"offset\": 3, \"encoding\": \"base64\"}\n\n"
                        + exit(0, false)).getBytes(StandardCharsets.UTF_8));
            }
        });
        assertThat(run("exec", "box", "cat", "/bin/true")).isZero();
        assertThat(outBytes).containsExactly(0x00, 0xff, 0x80);
    }

    @Test
    void execTakesEverythingAfterTheIdAsTheCommand() {
        streamExec(exit(0, false));
        assertThat(run("exec", "--cwd", "/tmp", "--env", "X=1", "--timeout", "2m", "box", "ls", "-la", "--json"))
                .isZero();
        assertThat(server.requests.getLast().text()).isEqualTo("{\"cmd\":[\"ls\",\"-la\",\"--json\"],\"cwd\":\"/tmp\","
                + "\"env\":{\"X\":\"1\"},\"timeoutMs\":120000}");
    }

    @Test
    void execSendsStdinWhenAsked() {
        streamExec(exit(0, false));
        stdin = new ByteArrayInputStream("hello\n".getBytes(StandardCharsets.UTF_8));
        assertThat(run("exec", "--stdin", "box", "--", "cat")).isZero();
        assertThat(server.requests.getLast().text()).isEqualTo("{\"cmd\":[\"cat\"],\"stdin\":\"hello\\n\"}");
    }

    @Test
    void execTimeoutExits124() {
        streamExec(chunk("stdout", "partial"), exit(137, true));
        assertThat(run("exec", "--timeout", "500ms", "box", "sleep", "10")).isEqualTo(124);
        assertThat(out).isEqualTo("partial");
        assertThat(err).isEqualTo("timed out\n");
        assertThat(server.requests.getLast().text()).contains("\"timeoutMs\":500");
    }

    @Test
    void execUsageErrors() {
        assertThat(run("exec", "box")).isEqualTo(2);
        assertThat(run("exec", "--timeout", "soon", "box", "ls")).isEqualTo(2);
        assertThat(err).contains("not a duration");
        assertThat(server.requests).isEmpty();
    }

    @Test
    void execWithJsonPrintsTheResult() {
        server.json("POST /v1/sandboxes/box/exec", 200, """
                {"exitCode": 3, "signal": null, "stdout": "hi\\n", "stderr": "", "encoding": "utf-8",
                 "stdoutTruncated": false, "stderrTruncated": false, "timedOut": false, "durationMs": 4}""");
        assertThat(run("--json", "exec", "box", "--", "x")).isEqualTo(3);
        assertThat(out).contains("\"exitCode\" : 3", "\"stdout\" : \"hi\\n\"");
        assertThat(server.requests.getLast().accept()).isEqualTo("application/json");
    }

    @Test
    void execOnAStoppedSandboxIsAnApiError() {
        server.json("POST /v1/sandboxes/box/exec", 409, error("invalid_state", "sandbox box is stopped"));
        assertThat(run("exec", "box", "true")).isEqualTo(ExitCodes.CONFLICT);
        assertThat(err).isEqualTo("error: invalid_state: sandbox box is stopped\n");
    }

    // ---- templates

    @Test
    void templatesShowProgressOfBuildingOnes() {
        server.json("GET /v1/templates", 200, """
                {"items": [{"name": "tiny", "description": "busybox", "status": "ready", "version": "1",
                            "builtAt": "2026-11-29T10:00:00Z", "sizeBytes": 2200000, "progress": null, "message": null},
                           {"name": "base", "description": "debian", "status": "building", "version": null,
                            "builtAt": null, "sizeBytes": null, "progress": 0.427, "message": "installing packages"}],
                 "nextCursor": null}""");
        assertThat(run("templates")).isZero();
        assertThat(out).isEqualTo("""
                NAME   STATUS         VERSION   SIZE      MESSAGE
                tiny   ready          1         2.1 MiB   -
                base   building 42%   -         -         installing packages
                """);
    }

    // ---- cp

    /** A tiny in-memory sandbox file system behind the files routes. */
    private final Map<String, byte[]> remoteFiles = new ConcurrentHashMap<>();
    private final Map<String, String> remoteModes = new ConcurrentHashMap<>();
    private final List<String> remoteDirs = new CopyOnWriteArrayList<>(List.of("/", "/root"));

    private void serveFiles() {
        server.on("GET /v1/sandboxes/box/files/stat", (request, exchange) -> {
            String path = request.params().get("path");
            String body = remoteDirs.contains(path) ? file(path, "dir", 0, "0755")
                    : remoteFiles.containsKey(path) ? file(path, "file", remoteFiles.get(path).length,
                    remoteModes.getOrDefault(path, "0644"))
                    : null;
            if (body == null) {
                respond(exchange, 404, "application/json", error("file_not_found", "no " + path).getBytes());
            } else {
                respond(exchange, 200, "application/json", body.getBytes(StandardCharsets.UTF_8));
            }
        });
        server.on("PUT /v1/sandboxes/box/files", (request, exchange) -> {
            String path = request.params().get("path");
            remoteFiles.put(path, request.body());
            if (request.params().containsKey("mode")) remoteModes.put(path, request.params().get("mode"));
            respond(exchange, 200, "application/json",
                    file(path, "file", request.body().length, "0644").getBytes(StandardCharsets.UTF_8));
        });
        server.on("POST /v1/sandboxes/box/files/mkdir", (request, exchange) -> {
            String path = request.params().get("path");
            remoteDirs.add(path);
            respond(exchange, 201, "application/json", file(path, "dir", 0, "0755").getBytes(StandardCharsets.UTF_8));
        });
        server.on("GET /v1/sandboxes/box/files", (request, exchange) -> {
            byte[] content = remoteFiles.get(request.params().get("path"));
            if (content == null) {
                respond(exchange, 404, "application/json", error("file_not_found", "no").getBytes());
            } else {
                respond(exchange, 200, "application/octet-stream", content);
            }
        });
        server.on("GET /v1/sandboxes/box/files/list", (request, exchange) -> {
            String dir = request.params().get("path");
            String prefix = dir.endsWith("/") ? dir : dir + "/";
            var items = new ArrayList<String>();
            for (String d : remoteDirs) {
                if (d.startsWith(prefix) && d.length() > prefix.length() && !d.substring(prefix.length()).contains("/")) {
                    items.add(file(d, "dir", 0, "0755"));
                }
            }
            remoteFiles.forEach((path, content) -> {
                if (path.startsWith(prefix) && !path.substring(prefix.length()).contains("/")) {
                    items.add(file(path, "file", content.length, remoteModes.getOrDefault(path, "0644")));
                }
            });
            items.add("""
                    {"path": "%slink", "name": "link", "type": "symlink", "size": 4, "mode": "0777",
                     "modifiedAt": "2026-11-29T10:00:00Z", "symlinkTarget": "/etc"}""".formatted(prefix));
            respond(exchange, 200, "application/json",
                    ("{\"items\": [" + String.join(",", items) + "], \"nextCursor\": null}").getBytes(StandardCharsets.UTF_8));
        });
    }

    @Test
    void cpUploadsAFileIntoADirectoryWithItsMode() throws IOException {
        serveFiles();
        Path script = tmp.resolve("run.sh");
        Files.writeString(script, "#!/bin/sh\necho hi\n");
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-x---"));
        assertThat(run("cp", script.toString(), "box:/root")).isZero();
        assertThat(remoteFiles.get("/root/run.sh")).asString(StandardCharsets.UTF_8).isEqualTo("#!/bin/sh\necho hi\n");
        assertThat(remoteModes.get("/root/run.sh")).isEqualTo("0750");

        assertThat(run("cp", script.toString(), "box:/root/renamed.sh")).isZero();
        assertThat(remoteFiles).containsKey("/root/renamed.sh");
        assertThat(run("cp", script.toString(), "box:/new/")).isZero();
        assertThat(remoteFiles).containsKey("/new/run.sh");
    }

    @Test
    void cpDownloadsAFile() throws IOException {
        serveFiles();
        remoteFiles.put("/root/data.bin", new byte[] {1, 2, 3});
        remoteModes.put("/root/data.bin", "0600");
        assertThat(run("cp", "box:/root/data.bin", tmp.toString())).isZero();
        assertThat(Files.readAllBytes(tmp.resolve("data.bin"))).containsExactly(1, 2, 3);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(tmp.resolve("data.bin"))))
                .isEqualTo("rw-------");
        assertThat(run("cp", "box:/root/data.bin", tmp.resolve("other.bin").toString())).isZero();
        assertThat(Files.readAllBytes(tmp.resolve("other.bin"))).containsExactly(1, 2, 3);
    }

    @Test
    void cpRecursiveUploadsAndDownloadsATree() throws IOException {
        serveFiles();
        Path src = tmp.resolve("src");
        Files.createDirectories(src.resolve("a/b"));
        Files.writeString(src.resolve("top.txt"), "top");
        Files.writeString(src.resolve("a/b/deep.txt"), "deep");
        Files.createSymbolicLink(src.resolve("a/link"), Path.of("../top.txt"));

        assertThat(run("cp", src.toString(), "box:/root")).isEqualTo(ExitCodes.ERROR);
        assertThat(err).contains("is a directory (use -r)");

        assertThat(run("cp", "-r", src.toString(), "box:/root")).isZero();
        assertThat(remoteDirs).contains("/root/src", "/root/src/a", "/root/src/a/b");
        assertThat(remoteFiles.keySet()).containsExactlyInAnyOrder("/root/src/top.txt", "/root/src/a/b/deep.txt");
        assertThat(err).contains("warning: skipped " + src.resolve("a/link") + ": a symlink");

        Path back = tmp.resolve("back");
        assertThat(run("cp", "-r", "box:/root/src", back.toString())).isZero();
        assertThat(Files.readString(back.resolve("top.txt"))).isEqualTo("top");
        assertThat(Files.readString(back.resolve("a/b/deep.txt"))).isEqualTo("deep");
        assertThat(Files.exists(back.resolve("link"), LinkOption.NOFOLLOW_LINKS)).isFalse();
        assertThat(err).contains("warning: skipped /root/src/link: a symlink");

        assertThat(run("--json", "cp", "-r", "box:/root/src", tmp.resolve("again").toString())).isZero();
        assertThat(out).contains("\"files\" : 2", "\"directories\" : 3", "\"bytes\" : 7");
    }

    @Test
    void cpNeedsExactlyOneSandboxSide() {
        assertThat(run("cp", "a.txt", "b.txt")).isEqualTo(2);
        assertThat(err).contains("exactly one of SRC and DST must be in a sandbox");
        assertThat(run("cp", "box:/a", "box:/b")).isEqualTo(2);
        assertThat(run("cp", "only-one")).isEqualTo(2);
        assertThat(server.requests).isEmpty();
    }

    @Test
    void cpOfAMissingLocalFileExitsOne() {
        assertThat(run("cp", tmp.resolve("missing").toString(), "box:/root")).isEqualTo(ExitCodes.ERROR);
        assertThat(err).isEqualTo("error: " + tmp.resolve("missing") + ": no such file or directory\n");
    }

    @Test
    void cpOfAMissingRemoteFileIsAnApiError() {
        serveFiles();
        assertThat(run("cp", "box:/nope", tmp.toString())).isEqualTo(ExitCodes.NOT_FOUND);
        assertThat(err).startsWith("error: file_not_found: ");
    }
}
