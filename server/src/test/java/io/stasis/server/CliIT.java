package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.cli.Main;
import io.stasis.testkit.Await;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
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

        assertThat(cli("", "files", "mkdir", "cli-demo", "/root/dir/sub").out()).isEqualTo("/root/dir/sub\n");
        assertThat(cli("", "files", "mv", "cli-demo", "/root/up.txt", "/root/dir/moved.txt").code()).isZero();
        assertThat(cli("", "files", "ls", "cli-demo", "/root/dir").out()).containsPattern("(?m)^file .* moved\\.txt$")
                .containsPattern("(?m)^dir .* sub$");
        assertThat(cli("", "files", "stat", "cli-demo", "/root/dir/moved.txt").out()).contains("SIZE       8 (8 B)");
        assertThat(cli("", "files", "rm", "cli-demo", "/root/dir").code()).as("not empty").isEqualTo(5);
        assertThat(cli("", "files", "rm", "-r", "cli-demo", "/root/dir").code()).isZero();
        assertThat(cli("", "files", "stat", "cli-demo", "/root/dir").code()).as("not found").isEqualTo(4);
        assertThat(cli("", "health").out()).isEqualTo("ok\n");
        assertThat(cli("", "metrics").out()).as("Prometheus text").containsPattern("(?m)^# (TYPE|HELP) ");
        assertThat(cli("", "openapi").out()).startsWith("openapi: 3");

        var missing = cli("", "info", "no-such-sandbox");
        assertThat(missing.code()).as("not found").isEqualTo(4);
        assertThat(missing.err()).contains("sandbox_not_found");

        assertThat(cli("", "rm", "cli-demo").code()).isZero();
        assertThat(cli("", "list").out()).doesNotContain(id);
    }

    /** A command that runs until interrupted ({@code events -f}, {@code watch}), on its own thread. */
    private static final class Running implements AutoCloseable {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();
        private final ByteArrayOutputStream err = new ByteArrayOutputStream();
        private final AtomicInteger code = new AtomicInteger(-1);
        private final Thread thread;

        Running(String... args) {
            var argv = new ArrayList<>(List.of("--url", service.url));
            argv.addAll(List.of(args));
            thread = Thread.ofVirtual().start(() -> code.set(Main.run(argv.toArray(String[]::new),
                    new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8),
                    InputStream.nullInputStream(), Map.of("STASIS_DATA_DIR", service.dataDir.toString()))));
        }

        String out() {
            return out.toString(StandardCharsets.UTF_8);
        }

        String err() {
            return err.toString(StandardCharsets.UTF_8);
        }

        /** Waits until its output shows {@code what}; a failure quotes what it printed. */
        void awaitOutput(String what, Predicate<Running> shown) {
            try {
                Await.until(what, Duration.ofSeconds(20), () -> shown.test(this));
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + "; stdout so far:\n" + out() + "\nstderr so far:\n" + err(), e);
            }
        }

        /** Interrupts it (as Ctrl-C would end it) and returns its exit code. */
        int stop() throws InterruptedException {
            thread.interrupt();
            assertThat(thread.join(Duration.ofSeconds(15))).as("stopped when interrupted").isTrue();
            return code.get();
        }

        @Override
        public void close() throws InterruptedException {
            if (thread.isAlive()) stop();
        }
    }

    private static String createTiny(String name) {
        var created = cli("", "create", "--template", "tiny", "--name", name);
        assertThat(created.code()).as(created.err()).isZero();
        return created.out().strip();
    }

    @Test
    void backgroundProcessesFromSpawnToWait() {
        String id = createTiny("cli-procs");
        var spawned = cli("", "spawn", id, "--tag", "job", "--", "sh", "-c", "echo out; echo err >&2; sleep 1; echo done; exit 5");
        assertThat(spawned.code()).as(spawned.err()).isZero();
        String pid = spawned.out().strip();
        assertThat(pid).matches("\\d+");
        assertThat(cli("", "ps", id).out()).containsPattern("(?m)^" + pid + "\\s+running\\s+-\\s+job\\s+\\S+\\s+sh -c 'echo out;");

        var followed = cli("", "logs", "-f", id, pid);
        assertThat(followed.code()).as("the process's exit code").isEqualTo(5);
        assertThat(followed.out()).isEqualTo("out\ndone\n");
        assertThat(followed.err()).isEqualTo("err\n");
        var logs = cli("", "logs", id, pid);
        assertThat(logs.code()).isZero();
        assertThat(logs.out()).isEqualTo("out\ndone\n");
        assertThat(cli("", "wait", id, pid).code()).isEqualTo(5);

        String sleeper = cli("", "spawn", id, "sleep", "1000").out().strip();
        assertThat(cli("", "wait", "--timeout", "300ms", id, sleeper).code()).isEqualTo(124);
        assertThat(cli("", "kill", id, sleeper).code()).isZero();
        assertThat(cli("", "wait", id, sleeper).code()).isEqualTo(143);
        assertThat(cli("", "ps", id).out()).containsPattern("(?m)^" + sleeper + "\\s+exited\\s+143 \\(TERM\\)");
        var again = cli("", "kill", "-s", "KILL", id, sleeper);
        assertThat(again.code()).as("conflict").isEqualTo(5);
        assertThat(again.err()).contains("invalid_state");
        assertThat(cli("", "--json", "ps", id).out()).contains("\"tag\" : \"job\"");
        var missing = cli("", "logs", id, "99999");
        assertThat(missing.code()).as("not found").isEqualTo(4);
        assertThat(missing.err()).contains("process_not_found");
        assertThat(cli("", "rm", id).code()).isZero();
    }

    @Test
    void interactiveCommandsWithPipedInput() {
        String id = createTiny("cli-tty");
        var shell = cli("echo hi-$((1+1)); exit 3\n", "shell", id);
        assertThat(shell.code()).as(shell.err()).isEqualTo(3);
        assertThat(shell.out()).contains("hi-2");

        var tty = cli("", "exec", "-t", id, "--", "sh", "-c", "[ -t 0 ] && [ -t 1 ] && echo on-a-tty; exit 4");
        assertThat(tty.code()).as(tty.err()).isEqualTo(4);
        assertThat(tty.out()).isEqualTo("on-a-tty\r\n");

        var it = cli("echo typed-$((2*3))\n", "exec", "-it", id, "--", "sh");
        assertThat(it.code()).as("Ctrl-D after the piped input ends the shell").isZero();
        assertThat(it.out()).contains("typed-6");

        // A script whose command still runs when the input ends, and whose last line has no newline.
        var script = cli("sleep 0.5; echo slow-$((1+1))\necho last-$((3+4))", "shell", id);
        assertThat(script.code()).as(script.err()).isZero();
        assertThat(script.out()).contains("slow-2").contains("last-7");

        var piped = cli("line one\nline two\n", "exec", "-i", id, "--", "sh", "-c", "cat; echo err >&2; exit 6");
        assertThat(piped.code()).isEqualTo(6);
        assertThat(piped.out()).isEqualTo("line one\nline two\n");
        assertThat(piped.err()).isEqualTo("err\n");
        assertThat(cli("", "ps", id).out()).as("exec -i forgets its process").doesNotContain("cat; echo err");

        var refused = cli("", "shell", "no-such-sandbox");
        assertThat(refused.code()).as("not found").isEqualTo(4);
        assertThat(refused.err()).contains("sandbox_not_found");
        assertThat(cli("", "rm", id).code()).isZero();
    }

    @Test
    void eventsFollowTheLiveStream() throws Exception {
        String id = createTiny("cli-events");
        try (var events = new Running("events", "-f", id)) {
            assertThat(cli("", "pause", id).code()).isZero();
            assertThat(cli("", "resume", id).code()).isZero();
            events.awaitOutput("the pause and the resume in the stream",
                    e -> e.out().contains("running -> paused (api)") && e.out().contains("paused -> running (api)"));
            assertThat(events.out()).contains("none -> running").contains(id);
            assertThat(events.stop()).isZero();
        }
        assertThat(cli("", "rm", id).code()).isZero();
    }

    @Test
    void watchPrintsOneLinePerChange() throws Exception {
        String id = createTiny("cli-watch");
        try (var watch = new Running("watch", id, "/root", "-r")) {
            watch.awaitOutput("the watch in place", w -> w.err().contains("watching /root and below"));
            // One change at a time: the server coalesces a burst into its net effect.
            assertThat(cli("", "exec", id, "--", "mkdir", "/root/sub").code()).isZero();
            watch.awaitOutput("the new directory", w -> w.out().contains("create /root/sub\n"));
            assertThat(cli("", "exec", id, "--", "sh", "-c", "echo hi > /root/sub/a.txt").code()).isZero();
            watch.awaitOutput("the new file below it", w -> w.out().contains("create /root/sub/a.txt\n"));
            assertThat(cli("", "exec", id, "--", "mv", "/root/sub/a.txt", "/root/b.txt").code()).isZero();
            watch.awaitOutput("the move", w -> w.out().contains("move /root/b.txt <- /root/sub/a.txt\n"));
            assertThat(watch.stop()).isZero();
        }
        var missing = cli("", "watch", id, "/no/such/dir");
        assertThat(missing.code()).as("not found").isEqualTo(4);
        assertThat(missing.err()).contains("file_not_found");
        assertThat(cli("", "rm", id).code()).isZero();
    }

    @Test
    void networkPolicyFromCreateToSet() {
        var created = cli("", "create", "--template", "tiny", "--name", "cli-net", "--egress-default", "deny",
                "--allow", "example.com,*.example.com", "--deny", "192.0.2.0/24");
        assertThat(created.code()).as(created.err()).isZero();
        String id = created.out().strip();

        var shown = cli("", "network", "show", "cli-net");
        assertThat(shown.code()).as(shown.err()).isZero();
        assertThat(shown.out()).containsPattern("(?m)^ADDRESS\\s+10\\.").containsPattern("(?m)^DEFAULT\\s+deny$")
                .containsPattern("(?m)^ALLOW\\s+example\\.com$").containsPattern("(?m)^\\s+\\*\\.example\\.com$")
                .containsPattern("(?m)^DENY\\s+192\\.0\\.2\\.0/24$");

        var set = cli("", "network", "set", id, "--default", "allow", "--deny", "198.51.100.7");
        assertThat(set.code()).as(set.err()).isZero();
        assertThat(set.out()).as("the whole policy replaced").containsPattern("(?m)^DEFAULT\\s+allow$")
                .containsPattern("(?m)^ALLOW\\s+-$").contains("198.51.100.7/32").doesNotContain("example.com");
        assertThat(cli("", "--json", "network", "show", id).out()).contains("\"default\" : \"allow\"", "\"enabled\" : true");
        assertThat(cli("", "events", id).out()).contains("network.policy");

        var bad = cli("", "network", "set", id, "--allow", "10.0.0.0/33");
        assertThat(bad.code()).as("invalid request").isEqualTo(6);
        assertThat(bad.err()).startsWith("error: invalid_request: ").contains("10.0.0.0/33");
        assertThat(cli("", "rm", id).code()).isZero();
    }

    @Test
    void volumesFromCreateToSync() {
        var created = cli("", "volume", "create", "cli-vol", "--size-mb", "64");
        assertThat(created.code()).as(created.err()).isZero();
        assertThat(created.out()).startsWith("vol_").contains(" cli-vol");
        var sandbox = cli("", "create", "--template", "tiny", "--volume", "cli-vol:/data", "--volume", "cli-vol:/view:ro");
        assertThat(sandbox.code()).as(sandbox.err()).isZero();
        String id = sandbox.out().strip();
        assertThat(cli("", "exec", id, "--", "sh", "-c", "echo hi > /data/f && cat /view/f").out()).isEqualTo("hi\n");
        assertThat(cli("", "volume", "ls").out()).containsPattern("(?m)^vol_\\S+\\s+cli-vol\\s+64\\s+1\\s");
        assertThat(cli("", "volume", "snapshot", "cli-vol").out()).startsWith("vsnap_");
        String sync = cli("", "volume", "sync", "cli-vol").out();
        assertThat(sync).startsWith("vsync_").contains("bytes sent");
        String syncId = sync.split(" ")[0];
        assertThat(cli("", "volume", "sync-rm", "cli-vol", syncId).out()).isEqualTo(syncId + "\n");
        assertThat(cli("", "volume", "sync-rm", "cli-vol", syncId).code()).as("gone already").isNotZero();
        var refused = cli("", "volume", "rm", "cli-vol");
        assertThat(refused.code()).as("mounted: conflict").isNotZero();
        assertThat(refused.err()).contains("invalid_state");
        assertThat(cli("", "create", "--template", "tiny", "--volume", "cli-vol").code()).as("bad mount syntax").isNotZero();
        assertThat(cli("", "rm", id).code()).isZero();
        assertThat(cli("", "volume", "rm", "cli-vol").code()).isZero();
    }

    @Test
    void tenantsKeysAndTokensFromTheCommandLine() {
        var tenant = cli("", "--json", "tenant", "create", "cli-tenant", "--max-running", "1");
        assertThat(tenant.code()).as(tenant.err()).isZero();
        String tenantId = tenant.out().replaceAll("(?s).*\"id\" : \"(ten_[a-z0-9]+)\".*", "$1");
        var key = cli("", "tenant", "key-create", tenantId);
        assertThat(key.code()).as(key.err()).isZero();
        String tenantKey = key.out().strip();
        assertThat(tenantKey).startsWith("sk_");

        var created = cli("", "--api-key", tenantKey, "create", "--template", "tiny", "--name", "cli-scoped");
        assertThat(created.code()).as(created.err()).isZero();
        var second = cli("", "--api-key", tenantKey, "create", "--template", "tiny");
        assertThat(second.code()).as("the quota of one running sandbox").isEqualTo(8);
        assertThat(second.err()).contains("quota_exceeded", "runningSandboxes");
        assertThat(cli("", "tenant", "ls").out()).containsPattern("cli-tenant\\s+1/1");

        var token = cli("", "--api-key", tenantKey, "token", "create", "cli-scoped", "-p", "exec,files:read", "--ttl", "10m", "--name", "ci");
        assertThat(token.code()).as(token.err()).isZero();
        String secret = token.out().strip();
        assertThat(secret).startsWith("st_");
        var ran = cli("", "--api-key", secret, "exec", "cli-scoped", "--", "echo", "scoped");
        assertThat(ran.code()).as(ran.err()).isZero();
        assertThat(ran.out()).isEqualTo("scoped\n");
        assertThat(cli("", "--api-key", secret, "list").code()).as("a token may not list the tenant's sandboxes").isEqualTo(7);
        assertThat(cli("", "--api-key", secret, "rm", "cli-scoped").code()).as("no sandbox:delete").isEqualTo(7);

        var listed = cli("", "--api-key", tenantKey, "token", "ls");
        assertThat(listed.out()).contains("ci", "exec,files:read").doesNotContain(secret);
        String tokenId = listed.out().lines().skip(1).findFirst().orElseThrow().split("\\s+")[0];
        assertThat(cli("", "--api-key", tenantKey, "token", "rm", tokenId).code()).isZero();
        assertThat(cli("", "--api-key", secret, "exec", "cli-scoped", "--", "true").code()).as("revoked").isEqualTo(7);

        assertThat(cli("", "--api-key", tenantKey, "rm", "cli-scoped").code()).isZero();
        assertThat(cli("", "tenant", "rm", tenantId).code()).isZero();
        assertThat(cli("", "--api-key", tenantKey, "list").code()).as("the tenant's keys went with it").isEqualTo(7);
    }

    @Test
    void aTemplateIsBuiltFromADockerfileAndItsContextThenShownLoggedUsedAndRemoved(@TempDir Path project) throws Exception {
        Files.writeString(project.resolve("Dockerfile"), """
                FROM tiny
                WORKDIR /app
                COPY . .
                RUN cat greeting.txt > built.txt && echo built from the cli
                CMD ["cat", "/app/built.txt"]
                """);
        Files.writeString(project.resolve("greeting.txt"), "hello from the context\n");
        var built = cli("", "template", "build", "-f", project.resolve("Dockerfile").toString(), "--context", project.toString(), "cli-tpl");
        assertThat(built.code()).as(built.err()).isZero();
        assertThat(built.err()).contains("step 3/3", "built from the cli");
        assertThat(cli("", "template", "ls").out()).contains("cli-tpl");
        assertThat(cli("", "template", "show", "cli-tpl").out()).contains("ready");
        assertThat(cli("", "template", "logs", "cli-tpl").out()).contains("built from the cli");
        var created = cli("", "create", "--template", "cli-tpl");
        String id = created.out().strip();
        assertThat(cli("", "exec", id, "--", "cat", "/app/built.txt").out()).isEqualTo("hello from the context\n");
        assertThat(cli("", "exec", "--user", "4242:4242", id, "--", "id", "-u").out()).isEqualTo("4242\n");
        var inUse = cli("", "template", "rm", "cli-tpl");
        assertThat(inUse.code()).isEqualTo(5);
        assertThat(cli("", "rm", id).code()).isZero();
        assertThat(cli("", "template", "rm", "cli-tpl").code()).isZero();

        Files.writeString(project.resolve("Dockerfile"), "FROM tiny\nRUN echo failing on purpose >&2; exit 9\n");
        var failed = cli("", "template", "build", "-f", project.resolve("Dockerfile").toString(), "cli-bad");
        assertThat(failed.code()).isEqualTo(1);
        assertThat(failed.err()).contains("exit code 9", "failing on purpose");
    }

    @Test
    void unreachableServiceExitsWith3() {
        var out = new ByteArrayOutputStream();
        int code = Main.run(new String[]{"--url", "http://127.0.0.1:9", "--api-key", "sk_x", "list"},
                new PrintStream(out), new PrintStream(new ByteArrayOutputStream()), new ByteArrayInputStream(new byte[0]));
        assertThat(code).isEqualTo(3);
    }
}
