package io.stasis.sdk;

import static io.stasis.sdk.FakeApi.respond;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Background processes against documented responses: start, list, wait, output, follow, input, signals. */
class ProcessesTest {
    static final String RUNNING = """
            {"id": "prc_1", "pid": 7, "cmd": ["npm", "run", "dev"], "cwd": "/root/app", "tag": "dev-server",
             "startedAt": "2026-11-29T10:00:00Z", "status": "running", "exitCode": null, "signal": null,
             "keepAlive": true, "keepAliveUntil": null, "stdoutBytes": 1234, "stderrBytes": 0,
             "stdin": true, "pty": false, "futureField": 1}""";
    static final String EXITED = RUNNING.replace("\"running\"", "\"exited\"")
            .replace("\"exitCode\": null", "\"exitCode\": 143").replace("\"signal\": null", "\"signal\": \"TERM\"");
    static final String BASE = "/v1/sandboxes/sbx_1/processes";

    private FakeApi api;
    private StasisClient client;
    private Processes processes;

    @BeforeEach
    void start() throws IOException {
        api = new FakeApi();
        client = StasisClient.builder().url(api.url()).apiKey("sk_test").requestTimeout(Duration.ofSeconds(5)).build();
        processes = client.sandboxes().processes("sbx_1");
    }

    @AfterEach
    void stop() {
        client.close();
        api.close();
    }

    @Test
    void startSendsOnlyWhatIsSetAndReadsTheProcess() {
        api.json("POST " + BASE, 201, RUNNING);
        BackgroundProcess p = processes.start(ProcessRequest.builder("npm", "run", "dev").cwd("/root/app")
                .env("PORT", "3000").tag("dev-server").keepAliveFor(Duration.ofHours(2)).stdin(true).pty(80, 24).build());
        assertThat(api.last().bodyText().replace(" ", "")).isEqualTo("{\"cmd\":[\"npm\",\"run\",\"dev\"],"
                + "\"cwd\":\"/root/app\",\"env\":{\"PORT\":\"3000\"},\"tag\":\"dev-server\",\"keepAlive\":true,"
                + "\"keepAliveFor\":\"2h\",\"stdin\":true,\"pty\":{\"cols\":80,\"rows\":24}}");
        assertThat(p.pid()).isEqualTo(7);
        assertThat(p.id()).isEqualTo("prc_1");
        ProcessInfo info = p.info();
        assertThat(info.cmd()).containsExactly("npm", "run", "dev");
        assertThat(info.startedAt()).isEqualTo(Instant.parse("2026-11-29T10:00:00Z"));
        assertThat(info.isRunning()).isTrue();
        assertThat(info.exitCode()).isNull();
        assertThat(info.stdoutBytes()).isEqualTo(1234);
        assertThat(info.stdin()).isTrue();
        assertThat(StasisJson.writeLine(p)).contains("\"pid\":7").contains("\"status\":\"running\"");

        processes.start("sleep", "1");
        assertThat(api.last().bodyText()).isEqualTo("{\"cmd\":[\"sleep\",\"1\"]}");
    }

    @Test
    void listsAndGetsAndMapsAMissingProcess() {
        api.json("GET " + BASE, 200, "{\"items\": [" + RUNNING + "," + EXITED.replace("\"pid\": 7", "\"pid\": 9")
                + "], \"nextCursor\": null}");
        assertThat(processes.list()).extracting(BackgroundProcess::pid).containsExactly(7L, 9L);
        api.json("GET " + BASE + "/9", 200, EXITED);
        ProcessInfo exited = processes.get(9).info();
        assertThat(exited.hasEnded()).isTrue();
        assertThat(exited.exitCode()).isEqualTo(143);
        assertThat(exited.signal()).isEqualTo("TERM");

        api.json("GET " + BASE + "/8", 404,
                "{\"error\": {\"code\": \"process_not_found\", \"message\": \"no process 8\", \"details\": {}}}");
        assertThatThrownBy(() -> processes.get(8))
                .isInstanceOfSatisfying(NotFoundException.class, e -> assertThat(e.code()).isEqualTo("process_not_found"));
        assertThatThrownBy(() -> processes.get(0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void waitForAsksAgainUntilTheProcessEnds() {
        api.json("POST " + BASE, 201, RUNNING);
        var calls = new AtomicInteger();
        api.on("GET " + BASE + "/7/wait", (request, exchange) ->
                respond(exchange, 200, "application/json", calls.incrementAndGet() < 3 ? RUNNING : EXITED));
        BackgroundProcess p = processes.start("x");
        ProcessInfo end = p.waitFor(null);
        assertThat(end.status()).isEqualTo("exited");
        assertThat(p.info()).isEqualTo(end);
        assertThat(calls).hasValue(3);
        assertThat(api.last().query()).isEqualTo("timeoutMs=" + BackgroundProcess.LONGEST_WAIT_CALL.toMillis());
    }

    @Test
    void waitForReturnsTheRunningProcessWhenTheTimeIsUp() {
        api.json("POST " + BASE, 201, RUNNING);
        api.json("GET " + BASE + "/7/wait", 200, RUNNING);
        ProcessInfo still = processes.start("x").waitFor(Duration.ofMillis(250));
        assertThat(still.isRunning()).isTrue();
        assertThat(api.requests.stream().filter(r -> r.path().endsWith("/wait")).findFirst().orElseThrow().query())
                .isEqualTo("timeoutMs=250");
    }

    @Test
    void outputDecodesTextAndBase64FromTheOffsets() {
        api.json("POST " + BASE, 201, RUNNING);
        api.on("GET " + BASE + "/7/output", (request, exchange) -> respond(exchange, 200, "application/json",
                request.query().contains("offset=0&")
                        ? "{\"stdout\": \"hi\\n\", \"stdoutOffset\": 3, \"stderr\": \"\", \"stderrOffset\": 0, "
                        + "\"encoding\": \"utf-8\", \"process\": " + RUNNING + "}"
                        : "{\"stdout\": \"/w==\", \"stdoutStart\": 5000, \"stdoutOffset\": 5001, \"stderr\": \"\", "
                        + "\"stderrStart\": 0, \"stderrOffset\": 0, \"encoding\": \"base64\", \"process\": " + EXITED + "}"));
        BackgroundProcess p = processes.start("x");
        ProcessOutput first = p.output();
        assertThat(first.stdout()).isEqualTo("hi\n");
        assertThat(first.stdoutOffset()).isEqualTo(3);
        assertThat(first.stdoutStart()).as("a server without starts: where the bytes began").isZero();
        ProcessOutput next = p.output(first.stdoutOffset(), first.stderrOffset());
        assertThat(api.last().query()).isEqualTo("offset=3&stderrOffset=0");
        assertThat(next.stdoutBytes()).containsExactly(0xff);
        assertThat(next.stdoutStart()).as("older output was dropped").isEqualTo(5000);
        assertThat(p.info().status()).as("the handle keeps the newest description").isEqualTo("exited");
    }

    @Test
    void followResumesFromTheDeliveredOffsetsSoEachByteArrivesOnce() {
        api.json("POST " + BASE, 201, RUNNING);
        api.json("GET " + BASE + "/7", 200, EXITED);
        var connections = new AtomicInteger();
        api.on("GET " + BASE + "/7/output", (request, exchange) -> {
            var out = FakeApi.startEvents(exchange);
            switch (connections.incrementAndGet()) {
                case 1 -> {
                    FakeApi.send(out, "event: stdout\nid: 3,0\ndata: {\"data\": \"hel\", \"offset\": 3}\n\n");
                    FakeApi.send(out, "event: stderr\nid: 3,2\ndata: {\"data\": \"e!\", \"offset\": 2}\n\n");
                    FakeApi.send(out, "event: stdout\nid: 5,2\ndata: {\"data\": \"lo"); // cut off mid-event
                }
                case 2 -> {
                    // A server that resends a little before the offset asked for: only the new bytes count.
                    FakeApi.send(out, "event: stdout\nid: 5,2\ndata: {\"data\": \"ello\", \"offset\": 5}\n\n");
                    FakeApi.send(out, "event: stderr\nid: 5,2\ndata: {\"data\": \"e!\", \"offset\": 2}\n\n");
                    FakeApi.send(out, ": ping\n\nevent: stdout\nid: 11,2\ndata: {\"data\": \" world\", \"offset\": 11}\n\n");
                    FakeApi.send(out, "event: dropped\nid: 20,2\ndata: {\"stream\": \"stdout\", \"from\": 11, \"to\": 20}\n\n");
                    FakeApi.send(out, "event: stdout\nid: 21,2\ndata: {\"data\": \"!\", \"offset\": 21}\n\n");
                    FakeApi.send(out, "event: exit\nid: 11,2\ndata: {\"exitCode\": 143, \"signal\": \"TERM\", "
                            + "\"timedOut\": false, \"durationMs\": 9}\n\n");
                }
                default -> throw new AssertionError("no third connection expected");
            }
        });
        var stdout = new ByteArrayOutputStream();
        var stderr = new ByteArrayOutputStream();
        var drops = new ArrayList<String>();
        var write = ExecOutputListener.writingTo(stdout, stderr);
        ProcessInfo end = processes.start("x").follow(new ExecOutputListener() {
            @Override
            public void onStdout(byte[] chunk) {
                write.onStdout(chunk);
            }

            @Override
            public void onStderr(byte[] chunk) {
                write.onStderr(chunk);
            }

            @Override
            public void onDropped(String stream, long from, long to) {
                drops.add(stream + " " + from + ".." + to);
            }
        });

        assertThat(stdout.toString(StandardCharsets.UTF_8)).isEqualTo("hello world!");
        assertThat(drops).containsExactly("stdout 11..20");
        assertThat(stderr.toString(StandardCharsets.UTF_8)).isEqualTo("e!");
        assertThat(end.exitCode()).isEqualTo(143);
        List<FakeApi.Request> follows = api.requests.stream().filter(r -> r.path().endsWith("/output")).toList();
        assertThat(follows).hasSize(2);
        assertThat(follows.get(0).query()).isEqualTo("follow=true&offset=0&stderrOffset=0");
        assertThat(follows.get(0).header("Last-Event-ID")).isNull();
        assertThat(follows.get(0).header("Accept")).isEqualTo("text/event-stream");
        assertThat(follows.get(1).header("Last-Event-ID")).isEqualTo("3,2");
    }

    @Test
    void followGivesUpWhenTheStreamKeepsBreakingWithoutProgress() throws Exception {
        var connections = new AtomicInteger();
        api.on("GET " + BASE + "/7/output", (request, exchange) -> {
            connections.incrementAndGet();
            FakeApi.startEvents(exchange).flush(); // headers, then the end: never the exit event
        });
        try (var http = HttpClient.newHttpClient()) {
            var transport = new HttpTransport(api.url(), "k", http, Duration.ofSeconds(5), null, RetryPolicy.defaults());
            var follower = new ProcessOutputFollower(transport, BASE + "/7/output", ExecOutputListener.IGNORE,
                    new Reconnects(Thread::sleep, Duration.ofMillis(400)), 0, 0);
            assertThatThrownBy(follower::follow).isInstanceOf(StasisConnectionException.class)
                    .hasMessageContaining("ended before the process's exit event");
        }
        assertThat(connections.get()).as("tried again, with growing pauses").isBetween(3, 6);
    }

    @Test
    void aProcessForgottenRightAfterItsExitStillReportsHowItEnded() {
        api.json("POST " + BASE, 201, RUNNING);
        api.json("GET " + BASE + "/7", 404, "{\"error\": {\"code\": \"process_not_found\", \"message\": \"gone\"}}");
        api.on("GET " + BASE + "/7/output", (request, exchange) -> FakeApi.send(FakeApi.startEvents(exchange),
                "event: exit\ndata: {\"exitCode\": 3, \"signal\": null, \"timedOut\": false, \"durationMs\": 1}\n\n"));
        ProcessInfo end = processes.start("x").follow(ExecOutputListener.IGNORE);
        assertThat(end.status()).isEqualTo("exited");
        assertThat(end.exitCode()).isEqualTo(3);
    }

    @Test
    void followToEndAnswersTheStreamsExitWithoutAskingForTheProcessAgain() {
        api.json("POST " + BASE, 201, RUNNING);
        var asked = new AtomicInteger();
        api.on("GET " + BASE + "/7", (request, exchange) -> {
            asked.incrementAndGet();
            FakeApi.respond(exchange, 500, "application/json", "{}");
        });
        api.on("GET " + BASE + "/7/output", (request, exchange) -> FakeApi.send(FakeApi.startEvents(exchange),
                "event: stdout\ndata: {\"data\": \"hi\", \"offset\": 2}\n\n"
                        + "event: exit\ndata: {\"exitCode\": 137, \"signal\": \"KILL\", \"timedOut\": false, \"durationMs\": 1}\n\n"));
        var out = new StringBuilder();
        ProcessInfo end = processes.start("x").followToEnd(ExecOutputListener.text(out::append, err -> { }), 0, 0);
        assertThat(out).hasToString("hi");
        assertThat(end.status()).isEqualTo("exited");
        assertThat(end.exitCode()).isEqualTo(137);
        assertThat(end.signal()).isEqualTo("KILL");
        assertThat(asked).hasValue(0);
    }

    private static void awaitUntil(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) throw new AssertionError("not within 5 s");
            Thread.sleep(5);
        }
    }

    @Test
    void aSubscriptionDeliversInTheBackgroundAndItsExitCompletesAtTheEnd() throws Exception {
        api.json("POST " + BASE, 201, RUNNING);
        var release = new java.util.concurrent.CountDownLatch(1);
        api.on("GET " + BASE + "/7/output", (request, exchange) -> {
            var out = FakeApi.startEvents(exchange);
            FakeApi.send(out, "event: stdout\ndata: {\"data\": \"first \", \"offset\": 6}\n\n");
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            FakeApi.send(out, "event: stdout\ndata: {\"data\": \"second\", \"offset\": 12}\n\n"
                    + "event: exit\ndata: {\"exitCode\": 0, \"signal\": null, \"timedOut\": false, \"durationMs\": 1}\n\n");
        });
        var out = new StringBuffer();
        var caller = Thread.currentThread();
        var threads = new java.util.concurrent.CopyOnWriteArraySet<Thread>();
        try (OutputSubscription output = processes.start("x").subscribe(ExecOutputListener.text(chunk -> {
            threads.add(Thread.currentThread());
            out.append(chunk);
        }, err -> { }))) {
            awaitUntil(() -> out.toString().equals("first "));
            assertThat(output.exit()).as("returned at once, the process still running").isNotDone();
            release.countDown();
            ProcessInfo end = output.exit().get(5, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(end.status()).isEqualTo("exited");
            assertThat(end.exitCode()).isZero();
            assertThat(out).hasToString("first second");
            assertThat(threads).doesNotContain(caller);
        }
    }

    @Test
    void closingASubscriptionStopsItAndCancelsItsExit() throws Exception {
        api.json("POST " + BASE, 201, RUNNING);
        var connections = new AtomicInteger();
        api.on("GET " + BASE + "/7/output", (request, exchange) -> {
            connections.incrementAndGet();
            var out = FakeApi.startEvents(exchange);
            FakeApi.send(out, "event: stdout\ndata: {\"data\": \"a\", \"offset\": 1}\n\n");
            try {
                Thread.sleep(10_000); // a quiet process
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        var out = new StringBuffer();
        var output = processes.start("x").subscribe(ExecOutputListener.text(out::append, err -> { }));
        awaitUntil(() -> out.length() == 1);
        long start = System.nanoTime();
        output.close();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
        assertThat(output.isOpen()).isFalse();
        assertThat(output.exit()).isCancelled();
        assertThat(connections).as("no reconnect after the close").hasValue(1);
    }

    @Test
    void followStopsAtOnceWhenTheListenerFails() {
        api.json("POST " + BASE, 201, RUNNING);
        var connections = new AtomicInteger();
        api.on("GET " + BASE + "/7/output", (request, exchange) -> {
            connections.incrementAndGet();
            FakeApi.send(FakeApi.startEvents(exchange), "event: stdout\ndata: {\"data\": \"a\", \"offset\": 1}\n\n");
        });
        var failure = new IllegalStateException("disk full");
        assertThatThrownBy(() -> processes.start("x").follow(new ExecOutputListener() {
            @Override
            public void onStdout(byte[] chunk) {
                throw failure;
            }
        })).isSameAs(failure);
        assertThat(connections).hasValue(1);
    }

    @Test
    void followMapsErrorsBeforeAndInsideTheStream() {
        api.json("POST " + BASE, 201, RUNNING);
        api.json("GET " + BASE + "/7/output", 404,
                "{\"error\": {\"code\": \"process_not_found\", \"message\": \"no process 7\"}}");
        BackgroundProcess p = processes.start("x");
        assertThatThrownBy(() -> p.follow(ExecOutputListener.IGNORE)).isInstanceOf(NotFoundException.class);

        api.on("GET " + BASE + "/7/output", (request, exchange) -> FakeApi.send(FakeApi.startEvents(exchange),
                "event: error\ndata: {\"error\": {\"code\": \"runtime_failed\", \"message\": \"relay died\"}}\n\n"));
        assertThatThrownBy(() -> p.follow(ExecOutputListener.IGNORE))
                .isInstanceOfSatisfying(ServerErrorException.class, e -> assertThat(e.errorMessage()).isEqualTo("relay died"));
    }

    @Test
    void inputSignalsResizeAndForget() {
        api.json("POST " + BASE, 201, RUNNING);
        api.json("POST " + BASE + "/7/stdin", 200, RUNNING);
        api.json("POST " + BASE + "/7/stdin/close", 200, RUNNING);
        api.json("POST " + BASE + "/7/signal", 200, EXITED);
        api.json("POST " + BASE + "/7/resize", 409,
                "{\"error\": {\"code\": \"invalid_state\", \"message\": \"no terminal\"}}");
        api.on("DELETE " + BASE + "/7", (r, e) -> respond(e, 204, null, ""));
        BackgroundProcess p = processes.start("x");

        p.sendStdin(new byte[]{1, 2, (byte) 0xff});
        assertThat(api.last().body()).containsExactly(1, 2, 0xff);
        assertThat(api.last().header("Content-Type")).isEqualTo("application/octet-stream");
        p.sendStdin("echo hi\n");
        assertThat(api.last().bodyText()).isEqualTo("echo hi\n");
        p.closeStdin();
        assertThat(api.last().path()).isEqualTo(BASE + "/7/stdin/close");

        assertThat(p.signal("TERM").signal()).isEqualTo("TERM");
        assertThat(api.last().bodyText()).isEqualTo("{\"signal\":\"TERM\"}");
        assertThat(p.info().hasEnded()).isTrue();

        assertThatThrownBy(() -> p.resize(120, 40)).isInstanceOf(ConflictException.class);
        assertThat(api.last().bodyText()).isEqualTo("{\"cols\":120,\"rows\":40}");
        assertThatThrownBy(() -> p.resize(0, 40)).isInstanceOf(IllegalArgumentException.class);

        p.forget();
        assertThat(api.last().method()).isEqualTo("DELETE");
    }
}
