package io.stasis.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One benchmark run: per runtime asked for, a private service, each chosen scenario in turn, then
 * the teardown and its leak check. A failing scenario is recorded and the others still run; the
 * teardown always runs. With both runtimes, gVisor's pass comes second and its figures, details and
 * errors are named {@value #GVISOR_PREFIX}*.
 */
public final class Benchmark {
    // The blob scenarios and the checkpoint scenario write gigabytes: last, so deleting them disturbs nothing after them.
    private static final List<Scenario> SCENARIOS = List.of(new FirstCalls(), new CliCalls(), new CreateToFirstOutput(), new ExecRoundTrip(),
            new IdleMemory(), new FileThroughput(), new RawFloors(), new PauseResume(), new StandbyResume(), new SeedScenario(), new HibernateResume(), new ForkTen(),
            new OutputThroughput(), new OutputLatency(), new FileEventLatency(), new ConcurrentFollowers(), new PreviewOverhead(), new EgressOverhead(),
            new Lifecycles(), new Crowd(), new TemplateBench(), new NodesBench(), new E2bBench(), new BlobThroughput(), new BlobDedup(), new BlobRestore(), new CheckpointFork());

    static final String GVISOR_PREFIX = "gvisor.";

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
        for (String runtime : options.runtimes()) {
            String prefix = options.runtimes().size() > 1 && runtime.equals("gvisor") ? GVISOR_PREFIX : "";
            var pass = new ArrayList<Figure>();
            runPass(options, counts, runtime, progress, pass, details, errors, prefix);
            for (Figure figure : FloorLinks.apply(pass)) figures.add(figure.named(prefix + figure.name()));
        }
        return new Report(machine, options, counts, figures, details, errors, Duration.ofNanos(System.nanoTime() - start));
    }

    /** The scenarios of one runtime on a private service of their own: figures, details and errors (keys after {@code prefix}) added. */
    private static void runPass(Options options, Options.Counts counts, String runtime, Progress progress, List<Figure> figures,
                                Map<String, Map<String, Object>> details, Map<String, String> errors, String prefix) {
        // A stream's writer outruns its follower: keep all it writes (and the service's default 64 MiB at least).
        long outputLimit = Math.max(64L << 20, Math.min(options.outputSize(), options.maxSize()) + (64L << 20));
        try (var service = PrivateService.start(progress, outputLimit, List.of("--runtime", runtime))) {
            details.put(prefix + "service", Map.of("runtime", runtime));
            var hook = ShutdownHook.closing(service);
            try {
                // base is unpacked from the host's cache in the background at start: wait, so that
                // work does not compete with the first measurements.
                service.awaitTemplates(CreateToFirstOutput.TEMPLATES, progress);
                var context = new BenchContext(service, counts, options.maxSize(),
                        Math.min(options.outputSize(), options.maxSize()), options.followersInFlight(),
                        Math.min(options.blobRootSize(), options.maxSize()), Math.min(options.blobDataSize(), options.maxSize()),
                        progress, new Sampler(progress), runtime);
                for (Scenario scenario : SCENARIOS) {
                    if (!options.runs(scenario.name(), runtime)) continue;
                    service.requireOpen();
                    progress.say("scenario %s%s", prefix, scenario.name());
                    try {
                        var result = scenario.run(context);
                        figures.addAll(result.figures());
                        if (!result.details().isEmpty()) details.put(prefix + scenario.name(), result.details());
                    } catch (Exception e) {
                        errors.put(prefix + scenario.name(), describe(e));
                        progress.say("scenario %s%s FAILED: %s", prefix, scenario.name(), describe(e));
                    }
                }
                progress.say("deleting sandboxes, stopping the service, checking for leftovers");
            } finally {
                hook.close();
            }
        } catch (Exception e) {
            errors.put(prefix + "service", describe(e));
            progress.say("FAILED: %s", describe(e));
        }
    }

    private static String describe(Throwable e) {
        var text = new StringBuilder(e.getClass().getSimpleName()).append(": ").append(e.getMessage());
        for (Throwable s : e.getSuppressed()) text.append(" (also: ").append(s.getMessage()).append(')');
        return text.toString();
    }
}
