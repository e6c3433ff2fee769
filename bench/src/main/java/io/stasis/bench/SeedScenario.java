package io.stasis.bench;

import io.stasis.sdk.CreateSandboxRequest;
import io.stasis.sdk.LifecycleUpdate;
import io.stasis.sdk.Sandbox;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;

/**
 * The seed's scenario: an agent's workspace with a python REPL holding state and a dev server,
 * put in standby; the service is killed (SIGKILL) and started again; then the agent comes back.
 * The figure is from {@code POST .../resume} to the REPL's answer, which must carry its state on
 * (goal <= 50 ms), on a server JVM of its own (the checkout's jar); the dev server must answer too.
 */
final class SeedScenario implements Scenario {
    static final double TARGET_MS = 50;
    private static final String REPL = """
            x = 41
            while True:
                with open('/tmp/in') as fin:
                    fin.readline()
                x += 1
                with open('/tmp/out', 'w') as out: out.write('%d\\n' % x)
            """;

    @Override
    public String name() {
        return "seed";
    }

    @Override
    public ScenarioResult run(BenchContext context) throws Exception {
        var checkout = Checkout.ofRunningJar().filter(c -> Files.isRegularFile(c.serverJar())).orElse(null);
        if (checkout == null) return new ScenarioResult(List.of(), Map.of("skipped", "not run from a checkout with a built server jar"));
        int n = context.counts().hibernate();
        try (var server = ServerProcess.start(checkout, List.of(), context.progress())) {
            var sandbox = server.client().sandboxes().create(CreateSandboxRequest.builder().template("base").memoryMb(1024)
                    .lifecycle(LifecycleUpdate.builder().pauseAfterIdle(null).standbyAfterIdle(null).hibernateAfterIdle(null).build()).build());
            String id = sandbox.id();
            Path root = server.dataDir().resolve("btrfs/roots/" + id);
            sandbox.files().write("/root/repl.py", REPL);
            HibernateResume.requireSuccess(sandbox.exec("sh", "-c", "mkfifo /tmp/in /tmp/out && (python3 /root/repl.py >/dev/null 2>&1 &) && "
                    + "(cd /root && python3 -m http.server 8000 >/dev/null 2>&1 &)"), "start the REPL and the dev server");
            long expected = 42;
            if (Long.parseLong(ask(root)) != expected++) throw new IllegalStateException("the REPL did not start at 42");
            requireDevServer(sandbox, "before the first standby");
            double[] calls = new double[n], replies = new double[n];
            double[] samples = context.sampler().run("standby, SIGKILL of the service, restart, resume -> REPL", 0, n, i -> {
                server.client().sandboxes().standby(id);
                Thread.sleep(1000); // the page-out is done (a 1 MiB REPL and a web server)
                server.killAndRestart();
                long start = System.nanoTime();
                server.client().sandboxes().resume(id);
                long resumed = System.nanoTime();
                String answer = ask(root);
                long answered = System.nanoTime();
                check(answer);
                if (i >= 0) {
                    calls[i] = Format.millis(resumed - start);
                    replies[i] = Format.millis(answered - resumed);
                }
                return Format.millis(answered - start);
            });
            requireDevServer(server.client().sandboxes().get(id), "after the restarts");
            return new ScenarioResult(List.of(Figure.of("seed.resume_to_answer", name(), "ms",
                    "after a standby and a SIGKILL and restart of the service: POST .../resume until the python REPL answers with its state",
                    Stats.of(samples)).withTarget(Target.atMost(TARGET_MS)),
                    Figure.of("seed.resume_call", name(), "ms", "its first part: POST .../resume, the client's first call to the restarted service",
                            Stats.of(calls)),
                    Figure.of("seed.repl_reply", name(), "ms", "its second part: from the resume's answer until the REPL's", Stats.of(replies))),
                    Map.of("devServerAfterwards", "HTTP 200"));
        }
    }

    private static void requireDevServer(Sandbox sandbox, String when) throws Exception {
        var web = sandbox.exec("sh", "-c", "for i in $(seq 50); do curl -sf -o /dev/null http://127.0.0.1:8000/ && echo ok && exit; sleep 0.1; done; exit 1");
        if (web.exitCode() != 0) {
            var ps = sandbox.exec("ps", "-ef");
            throw new IllegalStateException("the dev server did not answer " + when + " in 5 s; processes:\n" + ps.stdout());
        }
    }

    private long next = 43;

    /** Fails unless the REPL carried on (its counter is the next one). */
    private void check(String answer) {
        long got = Long.parseLong(answer);
        if (got != next) throw new IllegalStateException("the REPL answered " + got + ", expected " + next + ": its state was lost");
        next++;
    }

    private static String ask(Path root) throws IOException {
        Files.writeString(root.resolve("tmp/in"), "q\n", StandardCharsets.UTF_8, StandardOpenOption.WRITE);
        return Files.readString(root.resolve("tmp/out"), StandardCharsets.UTF_8).strip();
    }
}
