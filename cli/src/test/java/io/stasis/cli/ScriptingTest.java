package io.stasis.cli;

import static io.stasis.cli.FakeServer.error;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** What scripts and shells rely on: exit codes by kind of failure, the completion script, progress only on a terminal. */
class ScriptingTest {
    @AutoClose
    final FakeServer server = FakeServer.start();
    final CliRunner cli = new CliRunner(server);

    // ---- exit codes

    @ParameterizedTest
    @CsvSource({
            "404, sandbox_not_found, 4",
            "404, file_not_found,    4",
            "409, invalid_state,     5",
            "409, name_taken,        5",
            "400, malformed_request, 6",
            "413, payload_too_large, 6",
            "422, invalid_request,   6",
            "401, unauthenticated,   7",
            "403, forbidden,         7",
            "429, quota_exceeded,    8",
            "503, host_busy,         8",
            "500, runtime_failed,    9",
            "500, internal,          9",
            "418, teapot,            1"})
    void eachKindOfApiErrorHasItsExitCode(int status, String code, int exit) {
        server.json("GET /v1/sandboxes/demo", status, error(code, "refused"));
        assertThat(cli.run("info", "demo")).isEqualTo(exit);
        assertThat(cli.err()).isEqualTo("error: " + code + ": refused\n");
    }

    @Test
    void theSameKindGivesTheSameCodeAcrossCommands() {
        server.json("POST /v1/sandboxes/demo/hibernate", 409, error("invalid_state", "sandbox demo is stopped"));
        server.json("POST /v1/sandboxes/demo/fork", 409, error("invalid_state", "sandbox demo is stopped"));
        server.json("DELETE /v1/sandboxes/demo", 409, error("invalid_state", "sandbox demo is busy"));
        assertThat(cli.run("hibernate", "demo")).isEqualTo(ExitCodes.CONFLICT);
        assertThat(cli.run("fork", "demo")).isEqualTo(ExitCodes.CONFLICT);
        assertThat(cli.run("rm", "demo")).isEqualTo(ExitCodes.CONFLICT);
        assertThat(cli.run("--json", "rm", "demo")).isEqualTo(ExitCodes.CONFLICT);
    }

    @Test
    void anUnreachableServerAndUsageErrorsKeepTheirCodes() {
        assertThat(cli.run("info")).isEqualTo(ExitCodes.USAGE);
        assertThat(Main.run(new String[] {"--url", "http://127.0.0.1:1", "--api-key", "k", "info", "demo"},
                new PrintStream(OutputStream.nullOutputStream()),
                new PrintStream(OutputStream.nullOutputStream()), InputStream.nullInputStream(),
                Map.of())).isEqualTo(ExitCodes.CANNOT_CONNECT);
    }

    @Test
    void helpListsEveryExitCode() {
        assertThat(cli.run("--help")).isZero();
        assertThat(cli.out()).contains("Exit codes:")
                .containsPattern("(?m)^  3 +cannot connect")
                .containsPattern("(?m)^  4 +not found")
                .containsPattern("(?m)^  5 +conflict")
                .containsPattern("(?m)^  6 +invalid request")
                .containsPattern("(?m)^  7 +unauthorized")
                .containsPattern("(?m)^  8 +busy")
                .containsPattern("(?m)^  9 +the server failed")
                .containsPattern("(?m)^  124 +exec");
    }

    // ---- completion

    @Test
    void completionPrintsABashScriptNamingTheSubcommands() {
        assertThat(cli.run("completion", "bash")).isZero();
        assertThat(cli.out()).contains("complete -F", "_picocli_stasis", "hibernate", "checkpoints", "preview", "network",
                "completion", "--json");
        assertThat(cli.out()).contains("files").contains("mkdir");
        assertThat(server.requests).as("no server needed").isEmpty();
    }

    @Test
    void zshGetsTheScriptThatLoadsBashcompinit() {
        assertThat(cli.run("completion", "zsh")).isZero();
        assertThat(cli.out()).contains("bashcompinit", "ZSH_VERSION", "hibernate");
        assertThat(cli.run("completion", "fish")).isEqualTo(ExitCodes.USAGE);
        assertThat(cli.err()).contains("fish");
    }

    // ---- progress

    @Test
    void slowVerbsDrawAProgressLineOnATerminalAndEraseIt() {
        server.json("POST /v1/sandboxes/demo/hibernate", 200, LiveStateCommandsTest.sandbox("sbx_1", "hibernated", null));
        assertThat(cli.runOnTerminal("hibernate", "demo")).isZero();
        assertThat(cli.out()).isEqualTo("hibernated\n");
        assertThat(cli.err()).startsWith("\rhibernating demo...").endsWith("\r");
        assertThat(cli.err().strip()).startsWith("hibernating demo...");
    }

    @Test
    void noProgressWithJsonOrWithoutATerminal() {
        server.json("POST /v1/sandboxes/demo/resume", 200, LiveStateCommandsTest.sandbox("sbx_1", "running", null));
        assertThat(cli.run("resume", "demo")).isZero();
        assertThat(cli.err()).isEmpty();
        assertThat(cli.runOnTerminal("--json", "resume", "demo")).isZero();
        assertThat(cli.err()).isEmpty();
        server.json("POST /v1/sandboxes/demo/fork", 201, "{\"items\": [" + FakeServer.sandbox("sbx_2", null) + "]}");
        assertThat(cli.run("fork", "demo")).isZero();
        assertThat(cli.out()).isEqualTo("sbx_2\n");
        assertThat(cli.err()).isEmpty();
        assertThat(cli.runOnTerminal("fork", "demo")).isZero();
        assertThat(cli.err()).contains("forking demo...");
        server.json("POST /v1/sandboxes", 201, FakeServer.sandbox("sbx_3", "box"));
        assertThat(cli.runOnTerminal("create", "--template", "base", "--name", "box")).isZero();
        assertThat(cli.err()).contains("creating box from base...");
        assertThat(cli.out()).isEqualTo("sbx_3\n");
    }

    @Test
    void templatesWaitShowsBuildProgressUntilReady() {
        var calls = new AtomicInteger();
        server.on("GET /v1/templates", (r, e) -> FakeServer.respond(e, 200, "application/json",
                templates(calls.incrementAndGet() == 1 ? "\"building\", \"progress\": 0.5, \"message\": \"unpacking\""
                        : "\"ready\", \"progress\": null, \"message\": null").getBytes()));
        assertThat(cli.runOnTerminal("templates", "--wait")).isZero();
        assertThat(cli.err()).contains("\rbuilding base 50% (unpacking)").endsWith("\r");
        assertThat(cli.out()).startsWith("NAME").contains("base   ready");
        assertThat(calls).hasValue(2);

        calls.set(0);
        assertThat(cli.run("templates", "--wait")).isZero();
        assertThat(cli.err()).as("not a terminal").isEmpty();
    }

    @Test
    void templatesWaitExitsOneWhenABuildFailed() {
        server.json("GET /v1/templates", 200, templates("\"failed\", \"progress\": null, \"message\": \"no network\""));
        assertThat(cli.run("templates", "--wait")).isEqualTo(ExitCodes.ERROR);
        assertThat(cli.out()).contains("failed", "no network");
        assertThat(cli.run("templates")).as("without --wait, listing is all").isZero();
    }

    @Test
    void cpShowsTheFileBeingCopiedOnATerminal(@TempDir Path tmp) throws Exception {
        Path local = Files.writeString(tmp.resolve("app.py"), "print(1)\n");
        server.json("GET /v1/sandboxes/demo/files/stat", 404, error("file_not_found", "no /root/app.py"));
        server.json("PUT /v1/sandboxes/demo/files", 200, FakeServer.file("/root/app.py", "file", 9, "0644"));
        assertThat(cli.runOnTerminal("cp", local.toString(), "demo:/root/app.py")).isZero();
        assertThat(cli.err()).startsWith("\rcopying " + local + " (0 files, 0 B so far)").endsWith("\r");
        assertThat(cli.run("cp", local.toString(), "demo:/root/app.py")).isZero();
        assertThat(cli.err()).isEmpty();
    }

    private static String templates(String statusAndProgress) {
        return """
                {"items": [{"name": "base", "description": "debian", "status": %s, "version": null,
                            "builtAt": null, "sizeBytes": null}], "nextCursor": null}""".formatted(statusAndProgress);
    }
}
