package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.cli.Main;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The CLI against a real service: every verb, output and exit codes. */
@Tag("root")
class CliIT {
    private static ServiceFixture service;

    @BeforeAll
    static void start() throws Exception {
        service = ServiceFixture.start();
    }

    @AfterAll
    static void stop() {
        service.close();
    }

    private record Run(int code, String out, String err) {
    }

    private static Run cli(String stdin, String... args) {
        var out = new ByteArrayOutputStream();
        var err = new ByteArrayOutputStream();
        var argv = new ArrayList<>(List.of("--url", service.url));
        argv.addAll(List.of(args));
        int code = Main.run(argv.toArray(String[]::new), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)),
                Map.of("STASIS_DATA_DIR", service.dataDir.toString()));
        return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void aSessionWithEveryVerb(@TempDir Path local) throws Exception {
        var created = cli("", "create", "--template", "tiny", "--name", "cli-demo", "--env", "WHO=cli", "--meta", "owner=test");
        assertThat(created.code()).as(created.err()).isZero();
        String id = created.out().strip();
        assertThat(id).startsWith("sbx_");

        var list = cli("", "list");
        assertThat(list.out()).contains(id).contains("cli-demo").contains("running");
        assertThat(cli("", "info", "cli-demo").out()).contains(id);
        assertThat(cli("", "--json", "info", "cli-demo").out()).contains("\"id\"").contains(id);
        assertThat(cli("", "templates").out()).contains("tiny").contains("ready");

        var exec = cli("", "exec", "cli-demo", "--", "sh", "-c", "echo hello $WHO; echo warn >&2; exit 7");
        assertThat(exec.code()).isEqualTo(7);
        assertThat(exec.out()).isEqualTo("hello cli\n");
        assertThat(exec.err()).contains("warn");
        assertThat(cli("piped input", "exec", "--stdin", "cli-demo", "--", "cat").out()).isEqualTo("piped input");
        assertThat(cli("", "exec", "--timeout", "300ms", "cli-demo", "--", "sleep", "10").code()).isEqualTo(124);

        Path upload = local.resolve("up.txt");
        Files.writeString(upload, "uploaded");
        assertThat(cli("", "cp", upload.toString(), "cli-demo:/root/up.txt").code()).isZero();
        assertThat(cli("", "exec", "cli-demo", "--", "cat", "/root/up.txt").out()).isEqualTo("uploaded");
        Path download = local.resolve("down.txt");
        assertThat(cli("", "cp", "cli-demo:/root/up.txt", download.toString()).code()).isZero();
        assertThat(Files.readString(download)).isEqualTo("uploaded");

        var missing = cli("", "info", "no-such-sandbox");
        assertThat(missing.code()).isEqualTo(1);
        assertThat(missing.err()).contains("sandbox_not_found");

        assertThat(cli("", "rm", "cli-demo").code()).isZero();
        assertThat(cli("", "list").out()).doesNotContain(id);
    }

    @Test
    void unreachableServiceExitsWith3() {
        var out = new ByteArrayOutputStream();
        int code = Main.run(new String[]{"--url", "http://127.0.0.1:9", "--api-key", "sk_x", "list"},
                new PrintStream(out), new PrintStream(new ByteArrayOutputStream()), new ByteArrayInputStream(new byte[0]));
        assertThat(code).isEqualTo(3);
    }
}
