package io.stasis.cli;

import static io.stasis.cli.FakeServer.error;
import static io.stasis.cli.FakeServer.respond;
import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpExchange;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** spawn, ps, logs, kill, wait, watch and exec -i against documented responses. */
class ProcessCommandsTest {
    static final String BASE = "/v1/sandboxes/demo/processes";

    private FakeServer server;
    private Map<String, String> env;
    private String out;
    private String err;

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
        return runWithInput(InputStream.nullInputStream(), args);
    }

    private int runWithInput(InputStream in, String... args) {
        var outBuffer = new ByteArrayOutputStream();
        var errBuffer = new ByteArrayOutputStream();
        int code = Main.run(args, new PrintStream(outBuffer, true, StandardCharsets.UTF_8),
                new PrintStream(errBuffer, true, StandardCharsets.UTF_8), in, env);
        out = outBuffer.toString(StandardCharsets.UTF_8);
        err = errBuffer.toString(StandardCharsets.UTF_8);
        return code;
    }

    static String process(long pid, String status, Integer exitCode, String signal, String tag, String... cmd) {
        return """
                {"id": "prc_%d", "pid": %d, "cmd": %s, "cwd": null, "tag": %s, "startedAt": "2026-11-29T10:00:00.5Z",
                 "status": "%s", "exitCode": %s, "signal": %s, "keepAlive": false, "keepAliveUntil": null,
                 "stdoutBytes": 0, "stderrBytes": 0, "stdin": false, "pty": false}"""
                .formatted(pid, pid, json(List.of(cmd)), quoted(tag), status, exitCode, quoted(signal));
    }

    private static String quoted(String text) {
        return text == null ? "null" : "\"" + text + "\"";
    }

    private static String json(List<String> items) {
        return "[" + String.join(", ", items.stream().map(s -> "\"" + s.replace("\"", "\\\"") + "\"").toList()) + "]";
    }

    private static void events(HttpExchange exchange, String text) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
        exchange.sendResponseHeaders(200, 0);
        try (OutputStream stream = exchange.getResponseBody()) {
            stream.write(text.getBytes(StandardCharsets.UTF_8));
        }
    }

    @Test
    void spawnSendsTheOptionsAndPrintsThePid() {
        server.json("POST " + BASE, 201, process(12, "running", null, null, "web", "python3", "-m", "http.server"));
        assertThat(run("spawn", "demo", "--tag", "web", "-e", "A=1", "--keep-alive-for", "2h", "--stdin",
                "--cwd", "/srv", "--", "python3", "-m", "http.server")).as(err).isZero();
        assertThat(out).isEqualTo("12\n");
        assertThat(server.requests.getLast().text().replace(" ", "")).isEqualTo("{\"cmd\":[\"python3\",\"-m\",\"http.server\"],"
                + "\"cwd\":\"/srv\",\"env\":{\"A\":\"1\"},\"tag\":\"web\",\"keepAlive\":true,\"keepAliveFor\":\"2h\",\"stdin\":true}");

        assertThat(run("spawn", "--tag", "web", "demo", "python3", "-m", "http.server")).isZero();
        assertThat(server.requests.getLast().text()).isEqualTo("{\"cmd\":[\"python3\",\"-m\",\"http.server\"],\"tag\":\"web\"}");
        assertThat(run("spawn", "demo", "--", "sh", "-c", "sleep 1", "--tag", "x")).as("after --, all is the command").isZero();
        assertThat(server.requests.getLast().text()).isEqualTo("{\"cmd\":[\"sh\",\"-c\",\"sleep 1\",\"--tag\",\"x\"]}");
        assertThat(run("--json", "spawn", "demo", "sleep", "1")).isZero();
        assertThat(out).contains("\"pid\" : 12");
        assertThat(run("spawn", "demo")).isEqualTo(ExitCodes.USAGE);
    }

    @Test
    void psPrintsATable() {
        server.json("GET " + BASE, 200, "{\"items\": [" + process(12, "running", null, null, "web", "python3", "-m", "http.server")
                + ", " + process(30, "exited", 143, "TERM", null, "sh", "-c", "sleep 100; echo it's done") + "], \"nextCursor\": null}");
        assertThat(run("ps", "demo")).isZero();
        assertThat(out).isEqualTo("""
                PID   STATUS    EXIT         TAG   STARTED                CMD
                12    running   -            web   2026-11-29T10:00:00Z   python3 -m http.server
                30    exited    143 (TERM)   -     2026-11-29T10:00:00Z   sh -c 'sleep 100; echo it'\\''s done'
                """);
        assertThat(run("--json", "ps", "demo")).isZero();
        assertThat(out).contains("\"items\"", "\"pid\" : 30", "\"exitCode\" : 143");
    }

    @Test
    void psWithPidsShowsOnlyThose() {
        server.json("GET " + BASE + "/30", 200, process(30, "exited", 0, null, null, "make"));
        server.json("GET " + BASE + "/31", 404, error("process_not_found", "no process 31"));
        assertThat(run("ps", "demo", "30")).isZero();
        assertThat(out).isEqualTo("""
                PID   STATUS   EXIT   TAG   STARTED                CMD
                30    exited   0      -     2026-11-29T10:00:00Z   make
                """);
        assertThat(server.requests(("GET " + BASE))).isEmpty();
        assertThat(run("--json", "ps", "demo", "30")).isZero();
        assertThat(out).contains("\"items\"", "\"pid\" : 30");
        assertThat(run("ps", "demo", "30", "31")).isEqualTo(ExitCodes.NOT_FOUND);
    }

    @Test
    void logsPrintsBothStreamsPageByPage() {
        server.json("GET " + BASE + "/7", 200, process(7, "exited", 0, null, null, "make"));
        server.on("GET " + BASE + "/7/output", (request, exchange) -> {
            String offset = request.params().get("offset");
            String body = switch (offset) {
                case "0" -> "{\"stdout\": \"one\\n\", \"stdoutOffset\": 4, \"stderr\": \"warn\\n\", \"stderrOffset\": 5, "
                        + "\"encoding\": \"utf-8\", \"process\": " + process(7, "exited", 0, null, null, "make") + "}";
                case "4" -> "{\"stdout\": \"two\\n\", \"stdoutOffset\": 8, \"stderr\": \"\", \"stderrOffset\": 5, "
                        + "\"encoding\": \"utf-8\", \"process\": " + process(7, "exited", 0, null, null, "make") + "}";
                default -> "{\"stdout\": \"\", \"stdoutOffset\": 8, \"stderr\": \"\", \"stderrOffset\": 5, "
                        + "\"encoding\": \"utf-8\", \"process\": " + process(7, "exited", 0, null, null, "make") + "}";
            };
            respond(exchange, 200, "application/json", body.getBytes(StandardCharsets.UTF_8));
        });
        assertThat(run("logs", "demo", "7")).isZero();
        assertThat(out).isEqualTo("one\ntwo\n");
        assertThat(err).isEqualTo("warn\n");

        assertThat(run("--json", "logs", "demo", "7")).isZero();
        assertThat(out).contains("\"stdout\" : \"one\\ntwo\\n\"", "\"stderr\" : \"warn\\n\"", "\"stdoutDroppedBytes\" : 0",
                "\"status\" : \"exited\"");
        assertThat(err).isEmpty();
        assertThat(run("--json", "logs", "-f", "demo", "7")).isEqualTo(ExitCodes.USAGE);
    }

    @Test
    void logsFollowExitsWithTheProcesssCode() {
        server.json("GET " + BASE + "/7", 200, process(7, "exited", 3, null, null, "make"));
        server.on("GET " + BASE + "/7/output", (request, exchange) -> events(exchange,
                "event: dropped\nid: 2097152,0\ndata: {\"stream\": \"stdout\", \"from\": 0, \"to\": 2097152}\n\n"
                        + "event: stdout\nid: 2097155,0\ndata: {\"data\": \"ok\\n\", \"offset\": 2097155}\n\n"
                        + "event: stderr\nid: 3,4\ndata: {\"data\": \"bad\\n\", \"offset\": 4}\n\n"
                        + "event: exit\nid: 3,4\ndata: {\"exitCode\": 3, \"signal\": null, \"timedOut\": false, \"durationMs\": 5}\n\n"));
        assertThat(run("logs", "-f", "demo", "7")).isEqualTo(3);
        assertThat(out).isEqualTo("ok\n");
        assertThat(err).isEqualTo("stasis: 2.0 MiB of stdout (bytes 0 to 2097152) were dropped by the server, "
                + "which keeps the last part of each stream\nbad\n");

        server.json("GET " + BASE + "/8", 404, error("process_not_found", "no process 8"));
        assertThat(run("logs", "-f", "demo", "8")).isEqualTo(ExitCodes.NOT_FOUND);
        assertThat(err).contains("process_not_found");
    }

    @Test
    void forgetDropsEachEndedProcessGoingOnPastARunningOne() {
        server.json("GET " + BASE + "/7", 200, process(7, "exited", 0, null, null, "make"));
        server.json("DELETE " + BASE + "/7", 204, "");
        server.json("GET " + BASE + "/8", 200, process(8, "running", null, null, null, "sleep", "100"));
        server.json("DELETE " + BASE + "/8", 409, error("invalid_state", "process 8 is running"));
        assertThat(run("forget", "demo", "8", "7")).isEqualTo(ExitCodes.CONFLICT);
        assertThat(out).isEqualTo("7\n");
        assertThat(err).isEqualTo("error: invalid_state: process 8 is running\n");
        assertThat(run("forget", "demo", "x")).isEqualTo(ExitCodes.USAGE);
    }

    @Test
    void killSendsTheSignalByName() {
        server.json("GET " + BASE + "/7", 200, process(7, "running", null, null, null, "sleep", "100"));
        server.json("POST " + BASE + "/7/signal", 200, process(7, "running", null, null, null, "sleep", "100"));
        assertThat(run("kill", "demo", "7")).isZero();
        assertThat(out).isEmpty();
        assertThat(server.requests.getLast().text()).isEqualTo("{\"signal\":\"TERM\"}");
        assertThat(run("kill", "-s", "KILL", "demo", "7")).isZero();
        assertThat(server.requests.getLast().text()).isEqualTo("{\"signal\":\"KILL\"}");

        server.json("POST " + BASE + "/7/signal", 409, error("invalid_state", "process 7 has ended"));
        assertThat(run("kill", "demo", "7")).isEqualTo(ExitCodes.CONFLICT);
        assertThat(err).contains("invalid_state");
    }

    @Test
    void waitExitsWithTheProcesssCodeOr124() {
        server.json("GET " + BASE + "/7", 200, process(7, "running", null, null, null, "sleep", "1"));
        server.json("GET " + BASE + "/7/wait", 200, process(7, "exited", 137, "KILL", null, "sleep", "1"));
        assertThat(run("wait", "demo", "7")).isEqualTo(137);

        server.json("GET " + BASE + "/7/wait", 200, process(7, "running", null, null, null, "sleep", "1"));
        assertThat(run("wait", "--timeout", "200ms", "demo", "7")).isEqualTo(ExitCodes.TIMED_OUT);
        assertThat(err).contains("still runs after 200ms");
        assertThat(server.requests(("GET " + BASE + "/7/wait")).getLast().params()).containsKey("timeoutMs");

        server.json("GET " + BASE + "/7/wait", 200, process(7, "lost", null, null, null, "sleep", "1"));
        assertThat(run("wait", "demo", "7")).isEqualTo(ExitCodes.ERROR);
        assertThat(err).contains("no exit status");
    }

    @Test
    void watchPrintsOneLinePerChangeAndFailsOnOverflow() {
        server.on("GET /v1/sandboxes/demo/files/watch", (request, exchange) -> events(exchange, """
                event: ready
                data: {}

                event: create
                data: {"type": "create", "path": "/root/a.txt", "fileType": "file"}

                : keep-alive

                event: move
                data: {"type": "move", "path": "/root/b.txt", "fileType": "file", "from": "/root/a.txt"}

                event: delete
                data: {"type": "delete", "path": "/root/d", "fileType": "dir"}

                event: overflow
                data: {}

                """));
        assertThat(run("watch", "demo", "/root", "-r")).isEqualTo(ExitCodes.ERROR);
        assertThat(out).isEqualTo("""
                create /root/a.txt
                move /root/b.txt <- /root/a.txt
                delete /root/d
                overflow /root
                """);
        assertThat(err).startsWith("watching /root and below\n").contains("rescan");
        assertThat(server.requests.getLast().params()).isEqualTo(Map.of("path", "/root", "recursive", "true"));

        assertThat(run("--json", "watch", "demo", "/root")).isEqualTo(ExitCodes.ERROR);
        assertThat(out.lines().toList()).startsWith("{\"type\":\"create\",\"path\":\"/root/a.txt\",\"fileType\":\"file\"}",
                "{\"type\":\"move\",\"path\":\"/root/b.txt\",\"fileType\":\"file\",\"from\":\"/root/a.txt\"}",
                "{\"type\":\"delete\",\"path\":\"/root/d\",\"fileType\":\"dir\"}");

        server.json("GET /v1/sandboxes/demo/files/watch", 404, error("file_not_found", "no /nope"));
        assertThat(run("watch", "demo", "/nope")).isEqualTo(ExitCodes.NOT_FOUND);
        assertThat(err).contains("file_not_found");
    }

    @Test
    void execInteractiveFeedsStdinToABackgroundProcessAndForgetsIt() {
        server.json("POST " + BASE, 201, process(9, "running", null, null, null, "cat"));
        server.json("POST " + BASE + "/9/stdin", 200, process(9, "running", null, null, null, "cat"));
        var inputClosed = new CountDownLatch(1);
        server.on("POST " + BASE + "/9/stdin/close", (request, exchange) -> {
            inputClosed.countDown();
            respond(exchange, 200, "application/json", process(9, "running", null, null, null, "cat").getBytes(StandardCharsets.UTF_8));
        });
        server.json("GET " + BASE + "/9", 200, process(9, "exited", 0, null, null, "cat"));
        server.on("DELETE " + BASE + "/9", (request, exchange) -> respond(exchange, 204, null, new byte[0]));
        server.on("GET " + BASE + "/9/output", (request, exchange) -> {
            try {
                inputClosed.await(5, TimeUnit.SECONDS); // the output comes once the input is closed, as cat's would
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            events(exchange, "event: stdout\ndata: {\"data\": \"typed\", \"offset\": 5}\n\n"
                    + "event: exit\ndata: {\"exitCode\": 0, \"signal\": null, \"timedOut\": false, \"durationMs\": 5}\n\n");
        });
        int code = runWithInput(new ByteArrayInputStream("typed".getBytes(StandardCharsets.UTF_8)), "exec", "-i", "demo", "--", "cat");
        assertThat(code).as(err).isZero();
        assertThat(out).isEqualTo("typed");
        assertThat(server.requests("POST " + BASE).getFirst().text()).isEqualTo("{\"cmd\":[\"cat\"],\"stdin\":true}");
        assertThat(server.requests("POST " + BASE + "/9/stdin").getFirst().text()).isEqualTo("typed");
        assertThat(server.requests("DELETE " + BASE + "/9")).hasSize(1);
    }

    @Test
    void execRefusesOptionsATerminalCannotHonour() {
        assertThat(run("exec", "-it", "--cwd", "/tmp", "demo", "--", "sh")).isEqualTo(ExitCodes.USAGE);
        assertThat(err).contains("--cwd cannot be used with -t");
        assertThat(run("exec", "-i", "--timeout", "5s", "demo", "--", "cat")).isEqualTo(ExitCodes.USAGE);
        assertThat(err).contains("--timeout cannot be used with -i");
        assertThat(server.requests).isEmpty();
    }
}
