package io.stasis.bench;

import io.stasis.sdk.Sandbox;
import java.io.File;
import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The CLI as a user types it: {@code ./stasis list} and {@code ./stasis exec ID -- true}, each a
 * whole process from start to exit, against the private service.
 * <ul>
 *   <li>through the CLI daemon, warm (the launcher's default): the goal, p50 <= 300 ms;</li>
 *   <li>the first call after the daemon was stopped, which runs in a JVM of its own and starts the daemon;</li>
 *   <li>with {@code STASIS_CLI_DAEMON=0}: every call a JVM of its own, as before the daemon;</li>
 *   <li>the floor: a bare {@code java -version} of the same JDK.</li>
 * </ul>
 * The daemon is stopped when the scenario ends, so the run leaves no process behind.
 */
final class CliCalls implements Scenario {
    static final double TARGET_MS = 300;

    @Override
    public String name() {
        return "cli";
    }

    @Override
    public ScenarioResult run(BenchContext context) throws Exception {
        var checkout = Checkout.ofRunningJar().orElse(null);
        if (checkout == null) return new ScenarioResult(List.of(), Map.of("skipped", "not run from a checkout's bench jar"));
        var service = context.service();
        int n = context.counts().cli();
        int warmup = context.counts().warmup() == 0 ? 0 : 2;
        var env = new HashMap<String, String>();
        env.put("PATH", System.getenv().getOrDefault("PATH", "/usr/sbin:/usr/bin:/sbin:/bin"));
        env.put("HOME", System.getProperty("user.home"));
        env.put("STASIS_URL", service.client().url());
        env.put("STASIS_API_KEY", service.rootKey());
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        var launcher = checkout.launcher().toString();
        var figures = new ArrayList<Figure>();
        var details = new LinkedHashMap<String, Object>();
        Sandbox sandbox = service.create("tiny");
        try {
            time(env, launcher, "list"); // untimed: the launcher builds a stale CLI, the JVM writes its CDS archive
            stopDaemon(checkout);
            double first = time(env, launcher, "list");
            figures.add(Figure.of("cli.first_call", name(), "ms",
                    "./stasis list with no CLI daemon running: a JVM of its own, which also starts the daemon", Stats.single(first)));
            awaitDaemon(checkout);
            double[] list = context.sampler().run("./stasis list (daemon)", warmup, n, i -> time(env, launcher, "list"));
            figures.add(Figure.of("cli.list", name(), "ms", "./stasis list, a whole process, through the warm CLI daemon",
                    Stats.of(list)).withTarget(Target.atMost(TARGET_MS)));
            double[] exec = context.sampler().run("./stasis exec ID -- true (daemon)", warmup, n,
                    i -> time(env, launcher, "exec", sandbox.id(), "--", "true"));
            figures.add(Figure.of("cli.exec_true", name(), "ms", "./stasis exec ID -- true, a whole process, through the warm CLI daemon",
                    Stats.of(exec)).withTarget(Target.atMost(TARGET_MS)));
            var jvm = new HashMap<>(env);
            jvm.put("STASIS_CLI_DAEMON", "0");
            int m = Math.max(3, n / 4);
            double[] listJvm = context.sampler().run("./stasis list (JVM of its own)", warmup, m, i -> time(jvm, launcher, "list"));
            figures.add(Figure.of("cli.list_own_jvm", name(), "ms",
                    "./stasis list with STASIS_CLI_DAEMON=0: a JVM of its own per call (CDS archive, C1)", Stats.of(listJvm)));
            double[] execJvm = context.sampler().run("./stasis exec (JVM of its own)", warmup, m,
                    i -> time(jvm, launcher, "exec", sandbox.id(), "--", "true"));
            figures.add(Figure.of("cli.exec_true_own_jvm", name(), "ms",
                    "./stasis exec ID -- true with STASIS_CLI_DAEMON=0", Stats.of(execJvm)));
            double[] javaVersion = context.sampler().run("java -version", warmup, n, i -> time(env, java, "-version"));
            figures.add(Figure.of("floor.java_version", name(), "ms", "a bare java -version of the same JDK, a whole process",
                    Stats.of(javaVersion)));
            details.put("launcher", launcher);
        } finally {
            stopDaemon(checkout);
            service.delete(sandbox.id());
        }
        return new ScenarioResult(figures, details);
    }

    /** Milliseconds from the start of {@code argv} to its exit; it must succeed. */
    private static double time(Map<String, String> env, String... argv) throws IOException, InterruptedException {
        var builder = new ProcessBuilder(argv).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.DISCARD).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        builder.environment().clear();
        builder.environment().putAll(env);
        long start = System.nanoTime();
        Process process = builder.start();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException(String.join(" ", argv) + " did not end within 60 s");
        }
        double ms = Format.millis(System.nanoTime() - start);
        if (process.exitValue() != 0) throw new IllegalStateException(String.join(" ", argv) + " exited " + process.exitValue());
        return ms;
    }

    private static void stopDaemon(Checkout checkout) throws IOException, InterruptedException {
        if (!Files.isExecutable(checkout.cliClient())) return;
        var stop = new ProcessBuilder(checkout.cliClient().toString(), "--stop", checkout.cliDaemonSocket().toString())
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        if (!stop.waitFor(30, TimeUnit.SECONDS)) stop.destroyForcibly();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (Files.exists(checkout.cliDaemonSocket()) && System.nanoTime() < deadline) Thread.sleep(50);
    }

    private static void awaitDaemon(Checkout checkout) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            try (var probe = SocketChannel.open(UnixDomainSocketAddress.of(checkout.cliDaemonSocket()))) {
                return;
            } catch (IOException notYet) {
                Thread.sleep(50);
            }
        }
        throw new IllegalStateException("the CLI daemon did not start within 30 s at " + checkout.cliDaemonSocket());
    }
}
