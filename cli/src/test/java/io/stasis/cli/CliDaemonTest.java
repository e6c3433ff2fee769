package io.stasis.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The CLI daemon with its real client (target/stasis-client, built from src/main/c) against a fake
 * server: what goes through it, what is handed back to a JVM of the caller's, signals, stopping.
 */
class CliDaemonTest {
    private static final Path CLIENT = Path.of("target/stasis-client");

    @AutoClose
    private final FakeServer server = FakeServer.start();
    @TempDir
    Path tmp;
    private Path socket;
    private CliDaemon daemon;
    private Thread serving;
    /** The "JVM of its own" the client runs when the daemon hands a command back: a script that says so. */
    private Path local;

    record Run(int code, String out, String err) {
    }

    @BeforeEach
    void start() throws IOException {
        assumeTrue(Files.isExecutable(CLIENT), "stasis-client is built by the cli module's generate-resources phase");
        socket = tmp.resolve("cli.sock");
        daemon = CliDaemon.open(socket, null, Duration.ofMinutes(5));
        serving = Thread.ofVirtual().start(daemon::run);
        local = tmp.resolve("local-jvm");
        Files.writeString(local, "#!/bin/sh\necho \"ran locally: $*\"\n");
        local.toFile().setExecutable(true);
    }

    @AfterEach
    void stop() throws Exception {
        daemon.stop();
        serving.join(5000);
    }

    private Run client(Map<String, String> env, String input, Path cwd, String... args) throws Exception {
        var argv = new ArrayList<>(List.of(CLIENT.toAbsolutePath().toString(), socket.toString(), local.toString(), "--args"));
        argv.addAll(List.of(args));
        var builder = new ProcessBuilder(argv).directory(cwd.toFile());
        builder.environment().clear();
        builder.environment().putAll(env);
        Process process = builder.start();
        if (input != null) process.getOutputStream().write(input.getBytes(StandardCharsets.UTF_8));
        process.getOutputStream().close();
        byte[] stdout = process.getInputStream().readAllBytes();
        byte[] stderr = process.getErrorStream().readAllBytes();
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return new Run(process.exitValue(), new String(stdout, StandardCharsets.UTF_8), new String(stderr, StandardCharsets.UTF_8));
    }

    private static void awaitUntil(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) throw new AssertionError("timed out waiting for " + what);
            Thread.sleep(20);
        }
    }

    private Map<String, String> env() {
        return Map.of("STASIS_URL", server.url(), "STASIS_API_KEY", "sk_env", "PATH", System.getenv("PATH"));
    }

    @Test
    void aCommandRunsInTheDaemonWithTheCallersEnvironmentAndExitCode() throws Exception {
        server.json("GET /v1/sandboxes", 200, "{\"items\": [" + FakeServer.sandbox("sbx_1", "demo") + "], \"nextCursor\": null}");
        server.json("GET /v1/sandboxes/nosuch", 404, FakeServer.error("sandbox_not_found", "no sandbox 'nosuch'"));

        var list = client(env(), null, tmp, "list");
        assertThat(list.code()).isZero();
        assertThat(list.out()).startsWith("ID ").contains("sbx_1").contains("demo").doesNotContain("ran locally");
        assertThat(server.requests("GET /v1/sandboxes").getLast().authorization()).isEqualTo("Bearer sk_env");

        var missing = client(env(), null, tmp, "info", "nosuch");
        assertThat(missing.code()).isEqualTo(ExitCodes.NOT_FOUND);
        assertThat(missing.err()).contains("sandbox_not_found");
    }

    @Test
    void stdinIsReadWhenTheCommandAsksAndLocalPathsAreTheCallers() throws Exception {
        server.json("POST /v1/secrets", 201, "{\"name\": \"K\", \"createdAt\": \"2026-11-29T10:00:00Z\"}");
        var set = client(env(), "s3cr3t\n", tmp, "secret", "set", "K");
        assertThat(set.code()).isZero();
        assertThat(server.requests("POST /v1/secrets").getLast().text()).contains("\"value\":\"s3cr3t\"");

        // --data-dir relative to the caller's directory, not the daemon's.
        Files.createDirectories(tmp.resolve("data"));
        Files.writeString(tmp.resolve("data/root.key"), "sk_file\n");
        server.json("GET /v1/sandboxes", 200, "{\"items\": [], \"nextCursor\": null}");
        var withoutKey = Map.of("STASIS_URL", server.url(), "PATH", System.getenv("PATH"));
        assertThat(client(withoutKey, null, tmp, "--data-dir", "data", "list").code()).isZero();
        assertThat(server.requests("GET /v1/sandboxes").getLast().authorization()).isEqualTo("Bearer sk_file");
    }

    @Test
    void commandsThatNeedTheCallerRunInAJvmOfItsOwn() throws Exception {
        assertThat(client(env(), null, tmp, "cp", "a.txt", "demo:/a.txt").out()).isEqualTo("ran locally: cp a.txt demo:/a.txt\n");
        assertThat(client(env(), null, tmp, "exec", "-it", "demo", "--", "sh").out()).startsWith("ran locally: exec -it");
        assertThat(client(env(), null, tmp, "shell", "demo").out()).startsWith("ran locally: shell");
        assertThat(client(env(), null, tmp, "mcp").out()).startsWith("ran locally: mcp");
        assertThat(server.requests).isEmpty();
    }

    @Test
    void aSignalToTheClientStopsTheCommandInTheDaemon() throws Exception {
        server.on("POST /v1/sandboxes/demo/exec", (request, exchange) -> {
            try {
                Thread.sleep(Duration.ofSeconds(30));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        var argv = List.of(CLIENT.toAbsolutePath().toString(), socket.toString(), local.toString(), "--args", "exec", "demo", "--", "sleep", "30");
        var builder = new ProcessBuilder(argv).redirectErrorStream(true);
        builder.environment().putAll(env());
        Process process = builder.start();
        awaitUntil("the command to run in the daemon", () -> daemon.running() == 1
                && !server.requests("POST /v1/sandboxes/demo/exec").isEmpty());
        new ProcessBuilder("kill", "-INT", Long.toString(process.pid())).start().waitFor();
        assertThat(process.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).isEqualTo(128 + 2);
        awaitUntil("the daemon to end the command", () -> daemon.running() == 0);
    }

    @Test
    void stopEndsTheDaemonAndRemovesItsSocket() throws Exception {
        var stop = new ProcessBuilder(CLIENT.toAbsolutePath().toString(), "--stop", socket.toString()).start();
        assertThat(stop.waitFor(10, TimeUnit.SECONDS)).isTrue();
        serving.join(5000);
        assertThat(serving.isAlive()).isFalse();
        assertThat(socket).doesNotExist();
        // With none there, the client runs the command itself (and starts a daemon, here the script).
        assertThat(client(env(), null, tmp, "list").out()).isEqualTo("ran locally: list\n");
    }

    @Test
    void aSecondDaemonOnTheSameSocketLeavesItToTheFirstAndAStaleSocketIsReplaced() throws Exception {
        assertThat(CliDaemon.open(socket, null, Duration.ofMinutes(1))).isNull();
        daemon.stop();
        serving.join(5000);
        Files.createFile(socket); // what a killed daemon leaves
        daemon = CliDaemon.open(socket, null, Duration.ofMinutes(5));
        assertThat(daemon).isNotNull();
        serving = Thread.ofVirtual().start(daemon::run);
        try (var probe = SocketChannel.open(UnixDomainSocketAddress.of(socket))) {
            assertThat(probe.isConnected()).isTrue();
        }
    }
}
