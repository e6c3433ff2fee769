package io.stasis.bench;

import io.stasis.sdk.CreateSandboxRequest;
import io.stasis.sdk.ForkRequest;
import io.stasis.sdk.Sandbox;
import io.stasis.sdk.StasisClient;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * The first minute after a start: a service in a JVM of its own (the checkout's server jar, as
 * {@code ./stasis up} runs it), then one round of the common calls, then more rounds; each call's
 * first time against the median of its later ones. The goal: every first call within 2x of
 * steady state. Run twice, with the start's warm-up pass (the default) and with
 * {@code --no-warm-up}, to show what the pass does; also the time from the JVM's start to
 * "listening on". This JVM's own client runs one round against the benchmark's service first, so
 * that the first calls measure the new service, not the client.
 */
final class FirstCalls implements Scenario {
    static final double TARGET_RATIO = 2;
    private static final Pattern LISTENING = Pattern.compile("^listening on (http://\\S+)");

    @Override
    public String name() {
        return "first-call";
    }

    @Override
    public ScenarioResult run(BenchContext context) throws Exception {
        var checkout = Checkout.ofRunningJar().filter(c -> Files.isRegularFile(c.serverJar())).orElse(null);
        if (checkout == null) return new ScenarioResult(List.of(), Map.of("skipped", "not run from a checkout with a built server jar"));
        round(context.service().client()); // this side's code paths, warm
        int steady = Math.max(2, context.counts().hibernate());
        var figures = new ArrayList<Figure>();
        var details = new LinkedHashMap<String, Object>();
        for (boolean warmUp : List.of(true, false)) {
            String variant = warmUp ? "" : ".no_warm_up";
            try (var child = ChildService.start(checkout, warmUp, context.progress())) {
                figures.add(Figure.of("service_start" + variant, name(), "ms",
                        "from the server JVM's start to 'listening on'" + (warmUp ? " (warm-up pass included)" : " with --no-warm-up"),
                        Stats.single(child.startMs)));
                var rounds = new ArrayList<Map<String, Double>>();
                for (int i = 0; i <= steady; i++) rounds.add(round(child.client));
                var ratios = new LinkedHashMap<String, Object>();
                for (String kind : rounds.getFirst().keySet()) {
                    double first = rounds.getFirst().get(kind);
                    double[] later = rounds.subList(1, rounds.size()).stream().mapToDouble(r -> r.get(kind)).toArray();
                    double p50 = Stats.of(later).p50();
                    String what = "the first " + kind + " call after a start" + (warmUp ? "" : " with --no-warm-up")
                            + ", over its median of " + later.length + " later ones (" + Format.number(first) + " / "
                            + Format.number(p50) + " ms)";
                    var figure = Figure.of("first_call" + variant + "." + kind, name(), "x", what, Stats.single(first / p50));
                    figures.add(warmUp ? figure.withTarget(Target.atMost(TARGET_RATIO)) : figure);
                    ratios.put(kind, Map.of("firstMs", first, "laterP50Ms", p50));
                }
                details.put(warmUp ? "warmUp" : "noWarmUp", ratios);
            }
        }
        return new ScenarioResult(figures, details);
    }

    /** One round of the common calls on a new tiny sandbox: milliseconds per kind of call, in order. */
    private static Map<String, Double> round(StasisClient client) {
        var ms = new LinkedHashMap<String, Double>();
        long t = System.nanoTime();
        Sandbox sandbox = client.sandboxes().create(CreateSandboxRequest.builder().template("tiny").build());
        t = lap(ms, "create", t);
        try {
            sandbox.exec("true");
            t = lap(ms, "exec", t);
            sandbox.files().write("/tmp/first-call.txt", "first call\n");
            t = lap(ms, "file_write", t);
            sandbox.files().read("/tmp/first-call.txt");
            t = lap(ms, "file_read", t);
            sandbox.files().list("/tmp");
            t = lap(ms, "file_list", t);
            client.sandboxes().get(sandbox.id());
            t = lap(ms, "get", t);
            client.sandboxes().list();
            t = lap(ms, "list", t);
            sandbox.pause();
            t = lap(ms, "pause", t);
            sandbox.resume();
            t = lap(ms, "resume", t);
            sandbox.hibernate();
            t = lap(ms, "hibernate", t);
            sandbox.resume();
            t = lap(ms, "resume_hibernated", t);
            var checkpoint = sandbox.checkpoint(null, true);
            t = lap(ms, "checkpoint_memory", t);
            var forks = sandbox.fork(ForkRequest.builder().checkpoint(checkpoint.id()).count(1).build());
            t = lap(ms, "fork", t);
            for (Sandbox fork : forks) fork.delete();
            t = System.nanoTime();
        } finally {
            sandbox.delete();
        }
        lap(ms, "delete", t);
        return ms;
    }

    private static long lap(Map<String, Double> ms, String kind, long since) {
        long now = System.nanoTime();
        ms.put(kind, Format.millis(now - since));
        return now;
    }

    /** {@code java -jar stasis-server.jar} on a scratch data directory of its own, until closed. */
    private static final class ChildService implements AutoCloseable {
        final Process process;
        final Path dataDir;
        final StasisClient client;
        final double startMs;
        final BenchNetwork network;

        private ChildService(Process process, Path dataDir, StasisClient client, double startMs, BenchNetwork network) {
            this.process = process;
            this.dataDir = dataDir;
            this.client = client;
            this.startMs = startMs;
            this.network = network;
        }

        static ChildService start(Checkout checkout, boolean warmUp, Progress progress) throws Exception {
            Path dataDir = Files.createTempDirectory("stasis-bench-first-");
            Files.setPosixFilePermissions(dataDir, PosixFilePermissions.fromString("rwx--x--x"));
            var network = BenchNetwork.forDataDir(dataDir);
            var argv = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "--enable-native-access=ALL-UNNAMED", "-jar", checkout.serverJar().toString(),
                    "--port", "0", "--data-dir", dataDir.toString(), "--pool-size", "8G", "--no-slow-templates",
                    "--default-template", "tiny", "--pause-after-idle", "never", "--hibernate-after-idle", "never",
                    "--checkpoint-uploads", "on-request"));
            argv.addAll(network.flags());
            if (!warmUp) argv.add("--no-warm-up");
            progress.say("starting a server JVM on %s%s", dataDir, warmUp ? "" : " (--no-warm-up)");
            long start = System.nanoTime();
            Process process = new ProcessBuilder(argv).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.PIPE).start();
            var listening = new CompletableFuture<String>();
            Thread.ofVirtual().start(() -> {
                try (var lines = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String line; (line = lines.readLine()) != null; ) {
                        var m = LISTENING.matcher(line);
                        if (m.find()) listening.complete(m.group(1));
                    }
                } catch (IOException e) {
                    // the process ended
                }
                listening.completeExceptionally(new IllegalStateException("the server ended before it listened"));
            });
            String url;
            try {
                url = listening.get(3, TimeUnit.MINUTES);
            } catch (Exception e) {
                process.destroyForcibly();
                throw e;
            }
            double startMs = Format.millis(System.nanoTime() - start);
            String key = Files.readString(dataDir.resolve("root.key")).strip();
            var client = StasisClient.builder().url(url).apiKey(key).requestTimeout(Duration.ofMinutes(2)).build();
            return new ChildService(process, dataDir, client, startMs, network);
        }

        @Override
        public void close() throws Exception {
            try (client) {
                for (var sandbox : client.sandboxes().list().stream().toList()) sandbox.delete();
            } finally {
                process.destroy(); // SIGTERM: the service stops, nothing of it may stay
                if (!process.waitFor(60, TimeUnit.SECONDS)) process.destroyForcibly();
            }
            var left = new ArrayList<String>();
            left.addAll(Leftovers.mountsUnder(dataDir));
            left.addAll(Leftovers.loopDevicesBackedBy(dataDir));
            left.addAll(Leftovers.networkOf(network.table(), network.interfacePrefix()));
            if (!left.isEmpty()) throw new IllegalStateException("the server JVM left " + left + " (kept " + dataDir + ")");
            PrivateService.deleteTree(dataDir);
        }
    }
}
