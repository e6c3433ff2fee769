package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.stasis.testkit.Await;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Standard input, terminals and the terminal WebSocket, and that they survive hibernation. */
@Tag("root")
class InteractiveIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CALM = "{\"lifecycle\": {\"pauseAfterIdle\": null, \"hibernateAfterIdle\": null}}";
    private static ServiceFixture service;
    private static RawApi api;
    private static HttpClient http;

    @BeforeAll
    static void start() throws Exception {
        service = ServiceFixture.start();
        api = new RawApi(service.url, service.rootKey);
        http = HttpClient.newHttpClient();
    }

    @AfterEach
    void deleteSandboxes() {
        service.deleteSandboxes();
    }

    @AfterAll
    static void stop() {
        http.close();
        api.close();
        service.close();
    }

    private static long start(String sandbox, String body) {
        return api.post("/v1/sandboxes/" + sandbox + "/processes", body).get("pid").asLong();
    }

    @Test
    void standardInputReachesAProcessUntilClosed() throws Exception {
        String id = api.post("/v1/sandboxes", CALM).get("id").asText();
        long pid = start(id, "{\"cmd\": [\"cat\"], \"stdin\": true}");
        api.processStdin(id, pid, "hello\n");
        api.processStdin(id, pid, "world\n");
        Await.until("the echo", Duration.ofSeconds(10), () -> api.processStdout(id, pid).equals("hello\nworld\n"));
        assertThat(api.get("/v1/sandboxes/" + id + "/processes/" + pid).get("status").asText()).as("no end of file yet").isEqualTo("running");
        api.post("/v1/sandboxes/" + id + "/processes/" + pid + "/stdin/close", null);
        assertThat(api.get("/v1/sandboxes/" + id + "/processes/" + pid + "/wait?timeoutMs=10000").get("exitCode").asInt()).isZero();

        long noStdin = start(id, "{\"cmd\": [\"sleep\", \"1000\"]}");
        assertThat(api.call("POST", "/v1/sandboxes/" + id + "/processes/" + noStdin + "/stdin", "x").errorCode()).isEqualTo("invalid_state");
    }

    @Test
    void aPythonReplKeepsItsStateAcrossHibernationAndFork() throws Exception {
        String id = api.post("/v1/sandboxes", "{\"template\": \"base\", " + CALM.substring(1)).get("id").asText();
        long pid = start(id, "{\"cmd\": [\"python3\", \"-u\", \"-i\", \"-q\"], \"stdin\": true}");
        api.processStdin(id, pid, "x = 41\n");
        api.post("/v1/sandboxes/" + id + "/hibernate", null);
        api.processStdin(id, pid, "print('answer', x + 1)\n"); // wakes it
        Await.until("the REPL's answer", Duration.ofSeconds(15), () -> api.processStdout(id, pid).contains("answer 42"));
        String fork = api.post("/v1/sandboxes/" + id + "/fork", "{}").get("items").get(0).get("id").asText();
        api.processStdin(fork, pid, "print('fork', x * 2)\n");
        Await.until("the fork's REPL", Duration.ofSeconds(15), () -> api.processStdout(fork, pid).contains("fork 82"));
        assertThat(api.processStdout(id, pid)).doesNotContain("fork 82");
    }

    @Test
    void aProcessOnATerminalSeesItsSizeAndResizes() throws Exception {
        String id = api.post("/v1/sandboxes", CALM).get("id").asText();
        long pid = start(id, "{\"cmd\": [\"sh\"], \"pty\": {\"cols\": 80, \"rows\": 24}}");
        api.processStdin(id, pid, "stty size; tty\n");
        // Both lines, not just the first: `tty` may print a moment after `stty size`.
        Await.until("the size and the tty", Duration.ofSeconds(10), () -> api.processStdout(id, pid).contains("24 80")
                && api.processStdout(id, pid).contains("/dev/pts/"));
        api.post("/v1/sandboxes/" + id + "/processes/" + pid + "/resize", "{\"cols\": 100, \"rows\": 30}");
        api.processStdin(id, pid, "stty size\n");
        Await.until("the new size", Duration.ofSeconds(10), () -> api.processStdout(id, pid).contains("30 100"));
        api.processStdin(id, pid, "export KEPT=yes\n");
        api.post("/v1/sandboxes/" + id + "/hibernate", null);
        api.processStdin(id, pid, "echo kept=$KEPT\n");
        Await.until("the shell after hibernation", Duration.ofSeconds(15), () -> api.processStdout(id, pid).contains("kept=yes"));
        api.processStdin(id, pid, "exit 5\n");
        assertThat(api.get("/v1/sandboxes/" + id + "/processes/" + pid + "/wait?timeoutMs=10000").get("exitCode").asInt()).isEqualTo(5);
    }

    @Test
    void aBashTerminalHibernatesWhileAForegroundJobRuns() throws Exception {
        String id = api.post("/v1/sandboxes", "{\"template\": \"base\", " + CALM.substring(1)).get("id").asText();
        long pid = start(id, "{\"cmd\": [\"bash\", \"-i\"], \"pty\": {\"cols\": 80, \"rows\": 24}}");
        api.processStdin(id, pid, "sleep 3; echo slept-$((6*7))\n");
        Thread.sleep(500);
        api.post("/v1/sandboxes/" + id + "/hibernate", null);
        api.post("/v1/sandboxes/" + id + "/resume", null);
        Await.until("the job after hibernation", Duration.ofSeconds(15), () -> api.processStdout(id, pid).contains("slept-42"));
        api.processStdin(id, pid, "exit 4\n");
        assertThat(api.get("/v1/sandboxes/" + id + "/processes/" + pid + "/wait?timeoutMs=10000").get("exitCode").asInt()).isEqualTo(4);
    }

    @Test
    void anAshTerminalWithAForegroundJobRefusesHibernationAndKeepsRunning() throws Exception {
        String id = api.post("/v1/sandboxes", CALM).get("id").asText();
        long pid = start(id, "{\"cmd\": [\"sh\"], \"pty\": {\"cols\": 80, \"rows\": 24}}");
        api.processStdin(id, pid, "sleep 2; echo slept-$((6*7))\n");
        Thread.sleep(300);
        var refused = api.call("POST", "/v1/sandboxes/" + id + "/hibernate", null);
        assertThat(refused.status()).isEqualTo(409);
        assertThat(refused.errorCode()).isEqualTo("checkpoint_unsupported");
        assertThat(refused.body().toString()).contains("/dev/tty");
        assertThat(api.get("/v1/sandboxes/" + id).get("state").asText()).isEqualTo("running");
        Await.until("the job, uninterrupted", Duration.ofSeconds(15), () -> api.processStdout(id, pid).contains("slept-42"));
        api.post("/v1/sandboxes/" + id + "/hibernate", null); // the shell alone is fine
        api.post("/v1/sandboxes/" + id + "/resume", null);
    }

    @Test
    void theIdlePolicyWaitsForAnUncheckpointableTerminalJobAndHibernatesAfterIt() throws Exception {
        String id = api.post("/v1/sandboxes", "{\"lifecycle\": {\"pauseAfterIdle\": null, \"hibernateAfterIdle\": \"1s\"}}")
                .get("id").asText();
        long pid = start(id, "{\"cmd\": [\"sh\"], \"pty\": {\"cols\": 80, \"rows\": 24}}");
        api.processStdin(id, pid, "sleep 4; echo done-$((1+1))\n");
        Await.until("the job, never interrupted by the idle policy", Duration.ofSeconds(20), () -> api.processStdout(id, pid).contains("done-2"));
        Await.until("idle hibernation once the shell alone is left", Duration.ofSeconds(20),
                () -> api.get("/v1/sandboxes/" + id).get("state").asText().equals("hibernated"));
        api.processStdin(id, pid, "echo woke-$((3+4))\n");
        Await.until("the shell after the resume", Duration.ofSeconds(15), () -> api.processStdout(id, pid).contains("woke-7"));
    }

    @Test
    void closingATerminalsInputEndsAShellThatWasRunningACommand() throws Exception {
        String id = api.post("/v1/sandboxes", CALM).get("id").asText();
        long pid = start(id, "{\"cmd\": [\"sh\"], \"pty\": {\"cols\": 80, \"rows\": 24}}");
        // The Ctrl-D arrives while `sleep` runs, with the terminal in canonical mode: the shell's
        // line editor would read it as a NUL at its next prompt and wait forever.
        api.processStdin(id, pid, "sleep 0.5; echo slept-$((3+4))\n");
        api.post("/v1/sandboxes/" + id + "/processes/" + pid + "/stdin/close", null);
        var ended = api.get("/v1/sandboxes/" + id + "/processes/" + pid + "/wait?timeoutMs=15000");
        assertThat(ended.path("status").asText()).as(ended.toString()).isEqualTo("exited");
        assertThat(ended.get("exitCode").asInt()).isZero();
        assertThat(api.processStdout(id, pid)).contains("slept-7");
        assertThat(api.call("POST", "/v1/sandboxes/" + id + "/processes/" + pid + "/stdin", "x").errorCode()).isEqualTo("invalid_state");

        var terminal = new Terminal();
        WebSocket ws = terminal.open(id, "cmd=sh");
        ws.sendBinary(ByteBuffer.wrap("sleep 0.5; echo over-the-socket\n".getBytes(StandardCharsets.UTF_8)), true).get(5, TimeUnit.SECONDS);
        ws.sendText("{\"type\": \"eof\"}", true).get(5, TimeUnit.SECONDS);
        assertThat(terminal.control.poll(10, TimeUnit.SECONDS).get("type").asText()).isEqualTo("started");
        var exit = terminal.control.poll(15, TimeUnit.SECONDS);
        assertThat(exit).as("the exit after the end of input").isNotNull();
        assertThat(exit.get("exitCode").asInt()).isZero();
        assertThat(terminal.received.toString()).contains("over-the-socket");
    }

    /** Under gVisor too: its input goes through stasis-init's socket instead of the FIFO in the root. */
    @EachRuntime
    void theTerminalWebSocketCarriesBytesBothWaysResizesAndReattaches(String runtime) throws Exception {
        ServiceFixture.assumeRuntime(runtime);
        String id = api.post("/v1/sandboxes", "{\"runtime\": \"" + runtime + "\", " + CALM.substring(1)).get("id").asText();
        var first = new Terminal();
        var received = first.received;
        var control = first.control;
        var closed = first.closed;
        WebSocket ws = first.open(id, "cols=90&rows=20&cmd=sh&hangup=false");
        ws.sendBinary(ByteBuffer.wrap("echo hi-from-$((40+2)); stty size\n".getBytes(StandardCharsets.UTF_8)), true).get(5, TimeUnit.SECONDS);
        Await.until("the echo over the socket", Duration.ofSeconds(10), () -> received.toString().contains("hi-from-42"));
        Await.until("the size", Duration.ofSeconds(10), () -> received.toString().contains("20 90"));
        var started = control.poll(10, TimeUnit.SECONDS);
        assertThat(started.get("type").asText()).isEqualTo("started");
        long pid = started.get("pid").asLong();
        ws.sendText("{\"type\": \"resize\", \"cols\": 120, \"rows\": 40}", true).get(5, TimeUnit.SECONDS);
        ws.sendBinary(ByteBuffer.wrap("PS1='$ '; echo mark-$((1+1)); stty size\n".getBytes(StandardCharsets.UTF_8)), true).get(5, TimeUnit.SECONDS);
        Await.until("the new size", Duration.ofSeconds(10), () -> received.toString().contains("40 120"));
        api.post("/v1/sandboxes/" + id + "/hibernate", null); // the socket stays open across it
        api.post("/v1/sandboxes/" + id + "/resume", null);
        ws.sendBinary(ByteBuffer.wrap("echo back-$((2*3))\n".getBytes(StandardCharsets.UTF_8)), true).get(5, TimeUnit.SECONDS);
        Await.until("the shell after hibernation, same socket", Duration.ofSeconds(15), () -> received.toString().contains("back-6"));
        ws.sendClose(1000, "detaching").get(5, TimeUnit.SECONDS);
        assertThat(closed.get(10, TimeUnit.SECONDS)).isEqualTo(1000);
        assertThat(api.get("/v1/sandboxes/" + id + "/processes/" + pid).get("status").asText()).as("hangup=false keeps it").isEqualTo("running");

        var again = new Terminal();
        WebSocket reattached = again.open(id, "pid=" + pid + "&cols=70&rows=10");
        Await.until("the scrollback", Duration.ofSeconds(10), () -> again.received.toString().contains("mark-2"));
        reattached.sendBinary(ByteBuffer.wrap("stty size; exit 3\n".getBytes(StandardCharsets.UTF_8)), true).get(5, TimeUnit.SECONDS);
        assertThat(again.control.poll(10, TimeUnit.SECONDS).get("type").asText()).isEqualTo("started");
        var exit = again.control.poll(10, TimeUnit.SECONDS);
        assertThat(exit).isNotNull();
        assertThat(exit.get("type").asText()).isEqualTo("exit");
        assertThat(exit.get("exitCode").asInt()).isEqualTo(3);
        assertThat(again.received.toString()).contains("10 70");
        assertThat(again.closed.get(10, TimeUnit.SECONDS)).isEqualTo(1000);
        assertThat(api.call("GET", "/v1/sandboxes/" + id + "/processes/" + pid, null).status()).isEqualTo(200);
    }

    @Test
    void closingANewTerminalHangsItUp() throws Exception {
        String id = api.post("/v1/sandboxes", CALM).get("id").asText();
        var terminal = new Terminal();
        WebSocket ws = terminal.open(id, "cmd=sh");
        long pid = terminal.control.poll(10, TimeUnit.SECONDS).get("pid").asLong();
        ws.sendClose(1000, "bye").get(5, TimeUnit.SECONDS);
        var ended = api.get("/v1/sandboxes/" + id + "/processes/" + pid + "/wait?timeoutMs=10000");
        assertThat(ended.get("status").asText()).isEqualTo("exited");
        assertThat(ended.get("signal").asText()).isEqualTo("HUP");
    }

    /** A terminal client: bytes received, control messages, and the close status. */
    private static final class Terminal {
        final StringBuffer received = new StringBuffer();
        final LinkedBlockingQueue<JsonNode> control = new LinkedBlockingQueue<>();
        final CompletableFuture<Integer> closed = new CompletableFuture<>();

        WebSocket open(String sandbox, String query) throws Exception {
            return http.newWebSocketBuilder().header("Authorization", "Bearer " + service.rootKey)
                    .buildAsync(URI.create(service.url.replace("http", "ws") + "/v1/sandboxes/" + sandbox + "/terminal?" + query),
                            new WebSocket.Listener() {
                                @Override
                                public CompletionStage<?> onBinary(WebSocket socket, ByteBuffer data, boolean last) {
                                    received.append(StandardCharsets.UTF_8.decode(data));
                                    socket.request(1);
                                    return null;
                                }

                                @Override
                                public CompletionStage<?> onText(WebSocket socket, CharSequence data, boolean last) {
                                    try {
                                        control.add(JSON.readTree(data.toString()));
                                    } catch (Exception e) {
                                        control.add(JSON.createObjectNode().put("type", "unparsable"));
                                    }
                                    socket.request(1);
                                    return null;
                                }

                                @Override
                                public CompletionStage<?> onClose(WebSocket socket, int status, String reason) {
                                    closed.complete(status);
                                    return null;
                                }
                            }).get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void aTerminalWithoutAKeyIsRefused() throws Exception {
        String id = api.post("/v1/sandboxes", CALM).get("id").asText();
        var attempt = http.newWebSocketBuilder()
                .buildAsync(URI.create(service.url.replace("http", "ws") + "/v1/sandboxes/" + id + "/terminal"), new WebSocket.Listener() { });
        try {
            attempt.get(10, TimeUnit.SECONDS);
            throw new AssertionError("the upgrade should have been refused");
        } catch (ExecutionException e) {
            assertThat(e.getCause()).isInstanceOf(WebSocketHandshakeException.class);
            assertThat(((WebSocketHandshakeException) e.getCause()).getResponse().statusCode()).isEqualTo(401);
        }
    }
}
