package io.stasis.bench;

import io.stasis.sdk.CreateSandboxRequest;
import io.stasis.sdk.ForkRequest;
import io.stasis.sdk.Sandbox;
import io.stasis.sdk.StasisClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

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
            try (var child = ServerProcess.start(checkout, warmUp ? List.of() : List.of("--no-warm-up"), context.progress())) {
                figures.add(Figure.of("service_start" + variant, name(), "ms",
                        "from the server JVM's start to 'listening on'" + (warmUp ? " (warm-up pass included)" : " with --no-warm-up")
                                + (checkout.serverAotCache().isPresent() ? ", from ./stasis up's AOT cache" : ", without an AOT cache"),
                        Stats.single(child.startMs())));
                var rounds = new ArrayList<Map<String, Double>>();
                for (int i = 0; i <= steady; i++) rounds.add(round(child.client()));
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
}
