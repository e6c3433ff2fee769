package io.stasis.bench;

import io.stasis.sdk.Sandbox;
import io.stasis.sdk.StasisClient;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A host with many sandboxes running while others come and go: {@code --crowd} tiny sandboxes are
 * created ({@value #START_CONCURRENCY} at a time) and left running; then, while create ->
 * exec(echo) -> delete lifecycles churn {@value #CHURN_CONCURRENCY} at a time, {@code --crowd-probes}
 * GETs of a sandbox and as many execs of {@code echo} are timed on members of the crowd picked at
 * random, {@value #PROBES_AT_ONCE} calls at a time. The goal: GET and exec p99 under 100 ms with
 * 200 running. Every call must succeed: a single failure fails the scenario, with the first error.
 */
final class Crowd implements Scenario {
    static final int TARGET_CROWD = 200;
    static final double P99_TARGET_MS = 100;
    static final int START_CONCURRENCY = 20;
    static final int CHURN_CONCURRENCY = 10;
    static final int PROBES_AT_ONCE = 4;
    private static final String WORD = "here";

    @Override
    public String name() {
        return "crowd";
    }

    @Override
    public ScenarioResult run(BenchContext context) throws Exception {
        var service = context.service();
        var progress = context.progress();
        int n = context.counts().crowd();
        int probes = context.counts().crowdProbes();
        var crowd = Collections.synchronizedList(new ArrayList<Sandbox>());
        var failures = Collections.synchronizedList(new ArrayList<String>());
        try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
            try {
                long startAll = System.nanoTime();
                double[] createEach = startCrowd(service, executor, n, crowd, failures);
                double startSeconds = (System.nanoTime() - startAll) / 1e9;
                requireNone(failures, "starting the crowd");
                progress.say("crowd: %d tiny sandboxes running after %.1f s; churning %d at a time while timing %d GETs and %d execs",
                        n, startSeconds, CHURN_CONCURRENCY, probes, probes);

                var churning = new AtomicBoolean(true);
                var churned = new AtomicInteger();
                var churners = new ArrayList<Future<?>>();
                long churnStart = System.nanoTime();
                for (int i = 0; i < CHURN_CONCURRENCY; i++)
                    churners.add(executor.submit(() -> churn(service, churning, churned, failures)));
                double[] get = new double[probes];
                double[] exec = new double[probes];
                probe(service.client(), executor, List.copyOf(crowd), get, exec, failures);
                churning.set(false);
                for (var churner : churners) churner.get();
                double churnSeconds = (System.nanoTime() - churnStart) / 1e9;
                progress.say("crowd: probes done; %d lifecycles churned meanwhile in %.1f s, %d calls failed", churned.get(), churnSeconds,
                        failures.size());
                requireNone(failures, "probing the crowd while others churned");

                boolean judged = n >= TARGET_CROWD;
                Figure getFigure = Figure.of("crowd.get", name(), "ms", "GET /v1/sandboxes/{id} of a random one of " + n
                        + " running tiny sandboxes, while " + CHURN_CONCURRENCY + " create -> exec -> delete lifecycles churn, "
                        + PROBES_AT_ONCE + " calls at a time", Stats.of(get));
                Figure execFigure = Figure.of("crowd.exec", name(), "ms", "exec(echo) in a random one of " + n
                        + " running tiny sandboxes, meanwhile", Stats.of(exec));
                var figures = List.of(
                        judged ? getFigure.withTarget(Target.p99AtMost(P99_TARGET_MS)) : getFigure,
                        judged ? execFigure.withTarget(Target.p99AtMost(P99_TARGET_MS)) : execFigure,
                        Figure.of("crowd.churn_per_second", name(), "/s", "create -> exec -> delete lifecycles completed per second"
                                + " meanwhile, " + CHURN_CONCURRENCY + " at a time", Stats.single(churned.get() / churnSeconds)),
                        Figure.of("crowd.create_call", name(), "ms", "each create while the crowd grows to " + n + ", "
                                + START_CONCURRENCY + " at a time", Stats.of(createEach)));
                var details = new LinkedHashMap<String, Object>();
                details.put("crowd", n);
                details.put("startSeconds", startSeconds);
                details.put("probesEach", probes);
                details.put("churned", churned.get());
                details.put("failures", 0);
                if (!judged) details.put("targetNotJudged", "only " + n + " sandboxes in the crowd; the target is judged at " + TARGET_CROWD);
                return new ScenarioResult(figures, details);
            } finally {
                deleteAll(executor, crowd);
            }
        }
    }

    private static double[] startCrowd(PrivateService service, ExecutorService executor, int n, List<Sandbox> crowd, List<String> failures)
            throws Exception {
        double[] each = new double[n];
        var slots = new Semaphore(START_CONCURRENCY);
        var started = new ArrayList<Future<?>>();
        for (int i = 0; i < n; i++) {
            int index = i;
            slots.acquire();
            started.add(executor.submit(() -> {
                try {
                    long began = System.nanoTime();
                    crowd.add(service.create("tiny"));
                    each[index] = Format.millis(System.nanoTime() - began);
                } catch (RuntimeException e) {
                    failures.add("create: " + e);
                } finally {
                    slots.release();
                }
            }));
        }
        for (var f : started) f.get();
        return each;
    }

    /** Lifecycles one after the other until told to stop: at least one, so that even the shortest run has a rate. */
    private static void churn(PrivateService service, AtomicBoolean churning, AtomicInteger churned, List<String> failures) {
        do {
            try {
                Lifecycles.once(service);
                churned.incrementAndGet();
            } catch (RuntimeException e) {
                failures.add("churn: " + e);
            }
        } while (churning.get() && failures.isEmpty());
    }

    /** Fills {@code get} and {@code exec} with one timed call each per slot, {@value #PROBES_AT_ONCE} calls at a time. */
    private static void probe(StasisClient client, ExecutorService executor, List<Sandbox> crowd, double[] get, double[] exec,
                              List<String> failures) throws Exception {
        var next = new AtomicInteger();
        var probers = new ArrayList<Future<?>>();
        for (int p = 0; p < PROBES_AT_ONCE; p++) {
            probers.add(executor.submit(() -> {
                int i;
                while ((i = next.getAndIncrement()) < get.length * 2 && failures.isEmpty()) {
                    var sandbox = crowd.get(ThreadLocalRandom.current().nextInt(crowd.size()));
                    try {
                        long began = System.nanoTime();
                        if (i % 2 == 0) {
                            String state = client.sandboxes().get(sandbox.id()).state();
                            get[i / 2] = Format.millis(System.nanoTime() - began);
                            if (!state.equals("running")) throw new IllegalStateException(sandbox.id() + " is " + state + ", not running");
                        } else {
                            String out = sandbox.exec("echo", WORD).stdout();
                            exec[i / 2] = Format.millis(System.nanoTime() - began);
                            if (!out.equals(WORD + "\n")) throw new IllegalStateException("echo in " + sandbox.id() + " answered '" + out + "'");
                        }
                    } catch (RuntimeException e) {
                        failures.add((i % 2 == 0 ? "GET " : "exec ") + sandbox.id() + ": " + e);
                    }
                }
            }));
        }
        for (var f : probers) f.get();
    }

    private static void deleteAll(ExecutorService executor, List<Sandbox> crowd) throws Exception {
        var slots = new Semaphore(START_CONCURRENCY);
        var deletions = new ArrayList<Future<?>>();
        for (var sandbox : List.copyOf(crowd)) {
            slots.acquire();
            deletions.add(executor.submit(() -> {
                try {
                    sandbox.delete();
                } finally {
                    slots.release();
                }
                return null;
            }));
        }
        for (var f : deletions) f.get();
    }

    private static void requireNone(List<String> failures, String what) {
        if (!failures.isEmpty())
            throw new IllegalStateException(failures.size() + " calls failed " + what + "; the first: " + failures.getFirst());
    }
}
