package io.stasis.cli;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/** Runs the CLI against a {@link FakeServer} (through {@code STASIS_URL}, key {@code sk_env}) and keeps what the last run printed. */
final class CliRunner {
    private final FakeServer server;
    private String out = "";
    private String err = "";

    CliRunner(FakeServer server) {
        this.server = server;
    }

    /** The exit code; {@link #out()} and {@link #err()} hold what it printed. */
    int run(String... args) {
        return runWithInput("", args);
    }

    /** Like {@link #run}, with {@code stdin} on standard input. */
    int runWithInput(String stdin, String... args) {
        return run(stdin, false, args);
    }

    /** Like {@link #run}, as if stderr were a terminal (so that progress lines are drawn). */
    int runOnTerminal(String... args) {
        return run("", true, args);
    }

    private int run(String stdin, boolean errIsTerminal, String... args) {
        var outBuffer = new ByteArrayOutputStream();
        var errBuffer = new ByteArrayOutputStream();
        int code = Main.run(args, new PrintStream(outBuffer, true, StandardCharsets.UTF_8), new PrintStream(errBuffer, true, StandardCharsets.UTF_8),
                new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)), Map.of("STASIS_URL", server.url(), "STASIS_API_KEY", "sk_env"),
                errIsTerminal);
        out = outBuffer.toString(StandardCharsets.UTF_8);
        err = errBuffer.toString(StandardCharsets.UTF_8);
        return code;
    }

    String out() {
        return out;
    }

    String err() {
        return err;
    }
}
