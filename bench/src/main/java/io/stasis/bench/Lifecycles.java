package io.stasis.bench;

import io.stasis.sdk.Sandbox;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;

/**
 * Sandboxes coming and going under load: {@code --lifecycles-n} create -> exec(echo) -> delete of
 * {@code tiny} sandboxes, {@value #CONCURRENCY} at a time, on virtual threads. Reports how many
 * lifecycles a second the service completes (goal >= 20 on 2 cores) and each lifecycle's time.
 * Every one must succeed: a single failure fails the scenario, with the first error.
 */
final class Lifecycles implements Scenario {
    static final int CONCURRENCY = 50;
    static final double PER_SECOND_TARGET = 20;
    private static final String WORD = "alive";

    @Override
    public String name() {
        return "lifecycles";
    }

    @Override
    public ScenarioResult run(BenchContext context) throws Exception {
        var service = context.service();
        int n = context.counts().lifecycles();
        int concurrency = Math.min(CONCURRENCY, n);
        var slots = new Semaphore(concurrency);
        double[] each = new double[n];
        var failures = new ArrayList<String>();
        long start = System.nanoTime();
        try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
            var futures = new ArrayList<Future<?>>();
            for (int i = 0; i < n; i++) {
                int index = i;
                slots.acquire();
                futures.add(executor.submit(() -> {
                    try {
                        long began = System.nanoTime();
                        once(service);
                        each[index] = Format.millis(System.nanoTime() - began);
                    } catch (RuntimeException e) {
                        synchronized (failures) {
                            failures.add(e.toString());
                        }
                    } finally {
                        slots.release();
                    }
                    return null;
                }));
            }
            for (var f : futures) f.get();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        context.progress().say("lifecycles: %d at concurrency %d in %.1f s, %d failed", n, concurrency, seconds, failures.size());
        if (!failures.isEmpty())
            throw new IllegalStateException(failures.size() + " of " + n + " lifecycles failed; the first: " + failures.getFirst());
        var figures = List.of(
                Figure.of("lifecycles_per_second", name(), "/s", n + " create -> exec -> delete of tiny sandboxes, " + concurrency
                        + " at a time: completed per second", Stats.of(n / seconds)).withTarget(Target.atLeast(PER_SECOND_TARGET)),
                Figure.of("lifecycle_under_load", name(), "ms", "one create -> exec(echo) -> delete among " + concurrency + " at a time",
                        Stats.of(each)));
        return new ScenarioResult(figures, Map.of("lifecycles", n, "concurrency", concurrency, "failures", 0));
    }

    /** One create -> exec(echo) -> delete of a tiny sandbox; throws if any step fails or echo answers wrong. */
    static void once(PrivateService service) {
        Sandbox sandbox = service.create("tiny");
        try {
            String out = sandbox.exec("echo", WORD).stdout();
            if (!out.equals(WORD + "\n")) throw new IllegalStateException("echo in " + sandbox.id() + " answered '" + out + "'");
        } finally {
            sandbox.delete();
        }
    }
}
