package io.stasis.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One benchmark run: a private service, each chosen scenario in turn, then the teardown and its
 * leak check. A failing scenario is recorded and the others still run; the teardown always runs.
 */
public final class Benchmark {
    // The blob scenarios and the checkpoint scenario write gigabytes: last, so deleting them disturbs nothing after them.
    private static final List<Scenario> SCENARIOS = List.of(new FirstCalls(), new CliCalls(), new CreateToFirstOutput(), new ExecRoundTrip(),
            new IdleMemory(), new FileThroughput(), new RawFloors(), new PauseResume(), new StandbyResume(), new SeedScenario(), new HibernateResume(), new ForkTen(),
            new OutputThroughput(), new OutputLatency(), new FileEventLatency(), new ConcurrentFollowers(), new PreviewOverhead(), new EgressOverhead(),
            new Lifecycles(), new Crowd(), new TemplateBench(), new NodesBench(), new E2bBench(), new BlobThroughput(), new BlobDedup(), new BlobRestore(), new CheckpointFork());

    private Benchmark() {
    }

    public static Report run(Options options) {
        return run(options, Progress.toStderr());
    }

    static Report run(Options options, Progress progress) {
        long start = System.nanoTime();
        var machine = MachineFacts.gather();
        var counts = options.effective();
        progress.say("machine: %s, %d cores, load %s; counts %s", machine.kernel(), machine.cores(), machine.loadAverage(), counts);
        var figures = new ArrayList<Figure>();
        Map<String, Map<String, Object>> details = new LinkedHashMap<>();
        Map<String, String> errors = new LinkedHashMap<>();
        // A stream's writer outruns its follower: keep all it writes (and the service's default 64 MiB at least).
        long outputLimit = Math.max(64L << 20, Math.min(options.outputSize(), options.maxSize()) + (64L << 20));
        try (var service = PrivateService.start(progress, outputLimit, List.of("--runtime", options.runtime()))) {
            details.put("service", Map.of("runtime", options.runtime()));
            var hook = ShutdownHook.closing(service);
            try {
                // base is unpacked from the host's cache in the background at start: wait, so that
                // work does not compete with the first measurements.
                service.awaitTemplates(CreateToFirstOutput.TEMPLATES, progress);
                var context = new BenchContext(service, counts, options.maxSize(),
                        Math.min(options.outputSize(), options.maxSize()), options.followersInFlight(),
                        Math.min(options.blobRootSize(), options.maxSize()), Math.min(options.blobDataSize(), options.maxSize()),
                        progress, new Sampler(progress), options.runtime());
                for (Scenario scenario : SCENARIOS) {
                    if (!options.runs(scenario.name())) continue;
                    service.requireOpen();
                    progress.say("scenario %s", scenario.name());
                    try {
                        var result = scenario.run(context);
                        figures.addAll(result.figures());
                        if (!result.details().isEmpty()) details.put(scenario.name(), result.details());
                    } catch (Exception e) {
                        errors.put(scenario.name(), describe(e));
                        progress.say("scenario %s FAILED: %s", scenario.name(), describe(e));
                    }
                }
                progress.say("deleting sandboxes, stopping the service, checking for leftovers");
            } finally {
                hook.close();
            }
        } catch (Exception e) {
            errors.put("service", describe(e));
            progress.say("FAILED: %s", describe(e));
        }
        return new Report(machine, options, counts, FloorLinks.apply(figures), details, errors,
                Duration.ofNanos(System.nanoTime() - start));
    }

    private static String describe(Throwable e) {
        var text = new StringBuilder(e.getClass().getSimpleName()).append(": ").append(e.getMessage());
        for (Throwable s : e.getSuppressed()) text.append(" (also: ").append(s.getMessage()).append(')');
        return text.toString();
    }
}
