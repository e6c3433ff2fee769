package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.host.ToolRunner;
import io.stasis.testkit.Await;
import io.stasis.testkit.CounterLoop;
import io.stasis.testkit.HostLeaks;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;

/**
 * SIGKILL of the service at a random moment of an operation, trial after trial on one data
 * directory, as a user's harness would: a sandbox whose loop writes a counter, a file written and
 * acknowledged before each trial, the operation started, the service killed after a random delay
 * within the operation's own duration (measured first), the service started again. Then every
 * listed sandbox must be in a state the operation allows, answer an exec, hold every acknowledged
 * file, and have its counter go on wherever its state keeps processes; forks as well as parents.
 * The fault-point suite (CrashRecoveryIT) stops at each named step; this one lands anywhere,
 * inside CRIU and runc too (and a fork from spares: restored ahead, frozen, thawed by the fork). After each trial, nothing is left of the sandboxes it involved that are
 * gone (roots, bundles, cgroups, processes, mounts).
 *
 * <p>A second test kills the tool under the operation instead (runc, or CRIU under it), the service
 * running on: the same checks hold. A third runs every operation at once, each on its own subject,
 * and kills the service once, at a random point of each; a fourth kills it during a template build.
 *
 * <p>Seeded: {@code -Dstasis.kill.seed=N} replays a run (a failure prints its seed and trial);
 * {@code -Dstasis.kill.trials=N} kills of the service per operation, one at a time ({@value #DEFAULT_TRIALS} in CI),
 * {@code -Dstasis.kill.together-trials=N} all at once ({@value #TOGETHER_TRIALS}),
 * {@code -Dstasis.kill.tool-trials=N} of a tool ({@value #DEFAULT_TOOL_TRIALS}),
 * {@code -Dstasis.kill.template-trials=N} during a build ({@value #TEMPLATE_TRIALS});
 * {@code -Dstasis.kill.operations=stop,start} only some operations. The long mode is
 * {@code -Dstasis.kill.trials=200 -Dstasis.kill.together-trials=200 -Dstasis.kill.tool-trials=200
 * -Dstasis.kill.template-trials=200 -Dit.timeouts=disabled}.
 */
@Tag("root")
@Timeout(value = 30, unit = TimeUnit.MINUTES) // each test kills the service or a tool many times over; the build gives other tests 10
class RandomKillIT {
    // CI's counts: at 10 and 6 this test took 12 of the suite's 45 minutes; at 6 and 4 it took about 7,
    // with a new seed each run (over runs every operation meets every moment). The kills of the service
    // one operation at a time went down to 2 when the test of every operation at once came: 20 kills
    // per operation there take ~3 minutes, a restart each checking fifteen operations. The long mode
    // below is where thousands of kills go. A template build's 20 kills take ~60 s (a restart and a
    // rebuild each).
    private static final int DEFAULT_TRIALS = 1;
    private static final int DEFAULT_TOOL_TRIALS = 20;
    private static final int TOGETHER_TRIALS = 20;
    private static final int TEMPLATE_TRIALS = 20;
    /** Kills per operation when no property says: DEFAULT_TRIALS and DEFAULT_TOOL_TRIALS, fewer under gVisor. */
    private static int trialsByDefault;
    private static int toolTrialsByDefault;
    /** Trials per kill asked at most, for an operation whose tool runs for a small part of it only. */
    private static final int MAX_ATTEMPTS_PER_KILL = 3;
    /**
     * The runtime of every sandbox: {@code -Dstasis.kill.runtime=gvisor} runs the same trials on
     * gVisor sandboxes (RandomKillGvisorIT does, with fewer kills in CI).
     */
    private static String runtime;
    /** No warm-up pass: a restart per kill, and what is measured is recovery, not the first calls' speed. */
    private static String[] serviceFlags() {
        return new String[]{"--warm-pool", "0", "--no-warm-up", "--runtime", runtime};
    }
    /**
     * The operations that run runc or CRIU, and those tools. Not stop and delete: once the sandbox's
     * init has ended they remove runc's state and cgroups themselves, and no tool runs (a CI run found
     * nothing to kill in 18 trials of each).
     */
    private static final List<String> TOOL_OPERATIONS = List.of("create", "resume", "hibernate", "checkpoint-memory", "fork", "fork-10",
            "restore-durable", "start");
    private static final Set<String> TOOLS = Set.of("runc", "criu");

    /**
     * Whether a process is a tool an operation runs: runc or CRIU; under gVisor a {@code runsc}
     * command, not the sandbox's sentry or gofer (runsc too, which a kill would end the sandbox with),
     * or {@code stasis-sentry} asking the sentry for a save (in place of {@code runsc checkpoint}), or
     * to hold the tasks for a checkpoint or release them after it (not one still waiting for its call).
     */
    private static boolean isTool(ProcessHandle process) {
        String comm = comm(process);
        if (!runtime.equals("gvisor")) return TOOLS.contains(comm);
        var args = process.info().arguments().map(List::of).orElse(List.of());
        if (comm.equals("stasis-sentry")) return !args.isEmpty(); // without arguments: the one waiting for a call (HelperAhead)
        return comm.equals("runsc") && !args.contains("boot") && !args.contains("gofer");
    }
    private static final String COUNTER = CounterLoop.SCRIPT;
    private static final String CALM = "{\"lifecycle\": {\"pauseAfterIdle\": null, \"standbyAfterIdle\": null, \"hibernateAfterIdle\": null}}";
    private static final Set<String> DEFINED = Set.of("running", "paused", "standby", "hibernated", "stopped");

    /** The states a kill during the operation may leave its sandbox in: the old one or the new one, nothing else ("gone" for deleted). */
    private static Set<String> allowed(String operation, String from) {
        return new HashSet<>(switch (operation) {
            case "pause" -> List.of(from, "paused");
            case "standby" -> List.of(from, "standby");
            case "hibernate" -> List.of(from, "hibernated");
            case "resume" -> List.of(from, "running");
            case "stop" -> List.of(from, "stopped");
            case "start" -> List.of("stopped", "running");
            case "delete" -> List.of(from, "gone");
            default -> List.of(from); // checkpoints, forks and creates leave the subject as it was
        });
    }
    private static final List<String> ALL_OPERATIONS = List.of("pause", "resume", "standby", "hibernate", "checkpoint-memory",
            "checkpoint-files", "fork", "fork-10", "fork-spares", "stop", "start", "create", "delete", "restore-durable", "volume-sync");
    private static final List<String> OPERATIONS = operations(System.getProperty("stasis.kill.operations", ""));

    /** All of them, or a comma-separated list of some (to chase one). */
    private static List<String> operations(String asked) {
        if (asked.isEmpty() || asked.equals("all")) return ALL_OPERATIONS;
        var chosen = List.of(asked.split(","));
        if (!ALL_OPERATIONS.containsAll(chosen)) throw new IllegalArgumentException("stasis.kill.operations: one of " + ALL_OPERATIONS + ", was " + asked);
        return chosen;
    }

    private static Path dataDir;
    private static Path log;
    private static ServiceProcess service;
    private static RawApi api;
    private static long seed;
    /** A durable memory checkpoint of a deleted sandbox, which only the blob store holds: what restore-durable restores. */
    private static String durable;
    /** The memory checkpoint with two spares that fork-spares forks (deleted, with its spares, after each trial). */
    private static String spareCheckpoint;
    /** The volume volume-sync syncs, and how many files were acknowledged into it (through the S3 endpoint). */
    private static String volume;
    private static int volumeAcks;
    /** Sandboxes a trial left something of: reported once, by that trial. */
    private static final Set<String> leaked = new HashSet<>();

    @BeforeAll
    static void start(TestInfo test) throws Exception {
        var on = test.getTestClass().map(c -> c.getAnnotation(OnRuntime.class));
        if (on.isPresent()) startWith(on.get().value(), on.get().trials(), on.get().toolTrials());
        else startWith(System.getProperty("stasis.kill.runtime", "runc"), DEFAULT_TRIALS, DEFAULT_TOOL_TRIALS);
    }

    /** On a subclass: the runtime of its sandboxes and the kills per operation when no property says. */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.TYPE)
    @interface OnRuntime {
        String value();

        int trials();

        int toolTrials();
    }

    /**
     * Sets every static of a run afresh (a subclass runs in the same JVM, on its own service:
     * nothing of another class's run may carry over) and starts the service.
     */
    private static void startWith(String sandboxRuntime, int trials, int toolTrials) throws Exception {
        runtime = sandboxRuntime;
        trialsByDefault = trials;
        toolTrialsByDefault = toolTrials;
        durable = null;
        spareCheckpoint = null;
        volume = null;
        volumeAcks = 0;
        leaked.clear();
        api = null;
        service = null;
        ServiceFixture.assumeRuntime(runtime);
        seed = Long.getLong("stasis.kill.seed", new Random().nextLong());
        System.out.println("RandomKillIT seed: " + seed + " (replay with -Dstasis.kill.seed=" + seed + ")");
        dataDir = Files.createTempDirectory("stasis-kill-it", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx--x--x")));
        log = Path.of("target", "random-kill-it" + suffix() + "-service.log").toAbsolutePath();
        restart();
    }

    @AfterAll
    static void stop() throws Exception {
        try {
            if (api != null) {
                if (outage() != null) System.out.println("RandomKillIT: the service was down at the end; started again to clean up");
                for (JsonNode sandbox : api.get("/v1/sandboxes").get("items"))
                    api.call("DELETE", "/v1/sandboxes/" + sandbox.get("id").asText(), null);
                api.close();
            }
        } finally {
            if (service != null) service.close();
        }
        assertThat(HostLeaks.mountsUnder(dataDir)).isEmpty();
        assertThat(HostLeaks.swapFilesUnder(dataDir)).isEmpty();
        assertThat(HostLeaks.loopDevicesBackedBy(dataDir, Duration.ofSeconds(15))).isEmpty();
        var network = TestNetworkFlags.forDataDir(dataDir);
        assertThat(HostLeaks.nftTables(network.get(network.indexOf("--network-table") + 1))).isEmpty();
        assertThat(HostLeaks.interfaces(network.get(network.indexOf("--network-interface-prefix") + 1), Duration.ofSeconds(15))).isEmpty();
        ServiceFixture.deleteTree(dataDir);
    }

    private static void restart() throws Exception {
        if (api != null) api.close();
        service = ServiceProcess.start(dataDir, log, Map.of(), serviceFlags());
        api = new RawApi(service.url, Files.readString(dataDir.resolve("root.key")).strip());
    }

    /**
     * Why the service is not serving, though nothing here left it down (null: it answers); it is
     * started again then, so that the trials go on and the report counts this one.
     */
    private static String outage() throws Exception {
        String why = null;
        if (!service.process.isAlive()) why = "the service ended by itself (exit " + service.process.exitValue() + ")";
        else if (!answers(service.url)) {
            // Alive and silent: where its threads are tells why (CI once saw one hang for minutes after a restart).
            Path dump = Path.of("target", "random-kill-it-hang-" + System.currentTimeMillis() + ".txt").toAbsolutePath();
            var threads = ToolRunner.run(List.of(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                    Long.toString(service.process.pid()), "Thread.print"), Duration.ofSeconds(30));
            Files.writeString(dump, threads.stdoutText() + "\n" + threads.stderrText());
            why = "the service, still running, did not answer /healthz within 10 s; its threads: " + dump;
        }
        if (why == null) return null;
        why += "; its log ends:\n" + ServiceProcess.logTail(log, 40);
        if (service.process.isAlive()) service.kill();
        restart();
        return why;
    }

    /** Whether the service answers its health check within 10 s (the API's own client waits without a limit). */
    private static boolean answers(String url) throws InterruptedException {
        try (var http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build()) {
            var request = HttpRequest.newBuilder(URI.create(url + "/healthz")).timeout(Duration.ofSeconds(10)).build();
            return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
        } catch (IOException e) {
            return false;
        }
    }

    /** One kill: what was done, where, what was killed (null: nothing), and what went wrong (none when it held). */
    private record Trial(String operation, String from, long delayMs, String killed, List<String> problems) {
    }

    @Test
    void aKillAtAnyMomentLeavesEverySandboxDefinedUsableAndWhole() throws Exception {
        trials("service", OPERATIONS, Integer.getInteger("stasis.kill.trials", trialsByDefault), (call, delay) -> {
            Thread.sleep(delay);
            service.kill();
            call.join(Duration.ofSeconds(30));
            return "the service";
        });
    }

    /**
     * SIGKILL of the tool under an operation (runc, or CRIU under runc) instead of the service: the
     * call fails or not, and the sandbox must be left as a kill of the service would have to leave it;
     * the service itself goes on. The delays fall where the unkilled run had a tool running; a trial
     * in which no tool ran after the delay kills nothing (counted).
     */
    @Test
    void aKilledToolLeavesEverySandboxDefinedUsableAndWhole() throws Exception {
        var operations = OPERATIONS.stream().filter(TOOL_OPERATIONS::contains).toList();
        trials("tool", operations, Integer.getInteger("stasis.kill.tool-trials", toolTrialsByDefault), (call, delay) -> {
            long until = System.nanoTime() + delay * 1_000_000;
            while (call.isAlive()) {
                if (System.nanoTime() >= until) {
                    var tool = service.process.descendants().filter(RandomKillIT::isTool).findFirst();
                    if (tool.isPresent()) {
                        String what = comm(tool.get()) + " " + tool.get().info().arguments().map(a -> String.join(" ", a)).orElse("");
                        tool.get().destroyForcibly();
                        call.join(Duration.ofSeconds(60));
                        return what.strip();
                    }
                }
                Thread.sleep(1);
            }
            return null;
        });
    }

    /**
     * Every operation at once, each on a subject of its own, and one kill of the service that lands,
     * for each, at a random point of its own run: each starts that long before the kill (its duration
     * measured in a round of all of them at once, unkilled). One restart then checks as many
     * operations as there are, which is how CI reaches its kills per operation in the time one
     * operation at a time takes for a few; the kills land amid the other operations' work, as on a
     * busy host. An operation that had already answered when the kill came counts as nothing killed,
     * and the trials go on until each operation has its kills.
     */
    @Test
    void aKillDuringEveryOperationAtOnceLeavesEverySandboxDefinedUsableAndWhole() throws Exception {
        int trials = Integer.getInteger("stasis.kill.together-trials", TOGETHER_TRIALS);
        var random = new Random(seed);
        var subjects = new LinkedHashMap<String, Subject>();
        for (String operation : OPERATIONS) subjects.put(operation, new Subject(null, 0));
        // The unkilled round: how long each operation takes among the others bounds its delays.
        var durations = new LinkedHashMap<String, Long>();
        var froms = stage(subjects, random);
        var unkilled = runTogether(subjects, Map.of(), new HashSet<>());
        for (String operation : OPERATIONS) {
            var answer = unkilled.get(operation);
            if (answer == null || answer.status() >= 500) throw new AssertionError("seed " + seed + ": unkilled, " + operation + " answered " + answer);
            durations.put(operation, Math.max(20, answer.ms()));
            var subject = subjects.get(operation);
            subjects.put(operation, operation.equals("delete") ? new Subject(null, 0) : subject.after(froms.get(operation), subject.state()));
        }
        subjects.putAll(forget(subjects));
        var results = new ArrayList<Trial>();
        var failed = new ArrayList<String>();
        for (int t = 0; t < trials * MAX_ATTEMPTS_PER_KILL && fewestKills(results, OPERATIONS) < trials; t++) {
            froms = stage(subjects, random);
            var delays = new LinkedHashMap<String, Long>();
            for (String operation : OPERATIONS) delays.put(operation, (long) (random.nextDouble() * durations.get(operation) * 1.2));
            var inFlight = new HashSet<String>();
            var answers = runTogether(subjects, delays, inFlight);
            Set<String> involved = sandboxesOnDisk();
            restart();
            String outage = outage();
            var operated = new ArrayList<Operated>();
            var left = new HashMap<String, String>();
            for (String operation : OPERATIONS) {
                operated.add(new Operated(operation, froms.get(operation), subjects.get(operation)));
                left.put(operation, subjects.get(operation).state());
            }
            var problems = check(operated);
            if (outage != null) problems.add(outage);
            answers.forEach((operation, answer) -> {
                if (answer.status() == 500 && answer.response().errorCode().equals("internal"))
                    problems.add(operation + " answered 500 internal: " + answer.response().body());
            });
            for (var o : operated) // afresh after a failure, so that one does not hide the next ones
                subjects.put(o.operation(), problems.isEmpty() ? o.subject().after(o.from(), left.get(o.operation())) : new Subject(null, 0));
            subjects.putAll(forget(subjects));
            problems.addAll(leaks(involved));
            for (String operation : OPERATIONS) {
                results.add(new Trial(operation, froms.get(operation), delays.get(operation), inFlight.contains(operation) ? "the service" : null, problems));
                // One that answered before the kill ran that long, started as this trial starts them: the next delay's bound.
                var answer = answers.get(operation);
                if (!inFlight.contains(operation) && answer != null) durations.put(operation, Math.max(20, answer.ms()));
            }
            if (!problems.isEmpty()) {
                failed.add("trial " + (t + 1) + " (delays " + delays + ", from " + froms + "): " + problems);
                System.out.println("RandomKillIT (all at once) seed " + seed + " " + failed.getLast());
            }
        }
        forget(Map.of()); // the subjects too: the other tests count on sandboxes of their own
        report("service, every operation at once", OPERATIONS, results, durations);
        assertThat(failed)
                .as("seed " + seed + ": trials (one kill of the service during every operation) that left a sandbox undefined, unusable or without an acknowledged write")
                .isEmpty();
    }

    /** Kills that landed during the operation that has fewest of them. */
    private static long fewestKills(List<Trial> results, List<String> operations) {
        return operations.stream().mapToLong(o -> results.stream().filter(r -> r.operation().equals(o) && r.killed() != null).count())
                .min().orElse(0);
    }

    /**
     * Makes each operation's subject ready at once (running, counting, one more write acknowledged,
     * what its operation works on prepared) and brings it to the state its operation starts from: those states.
     */
    private static Map<String, String> stage(Map<String, Subject> subjects, Random random) throws InterruptedException {
        var froms = new LinkedHashMap<String, String>();
        subjects.keySet().forEach(operation -> froms.put(operation, from("service", operation, random)));
        var staged = new ConcurrentHashMap<String, Subject>();
        var failures = Collections.synchronizedList(new ArrayList<Throwable>());
        try (var each = Executors.newVirtualThreadPerTaskExecutor()) {
            subjects.forEach((operation, subject) -> each.submit(() -> {
                try {
                    var ready = ready(subject).acknowledge();
                    prepare(operation, ready);
                    api.bringTo(ready.id(), froms.get(operation));
                    staged.put(operation, ready);
                } catch (RuntimeException | AssertionError e) {
                    failures.add(new AssertionError("staging " + operation + " from " + froms.get(operation), e));
                }
            }));
        }
        if (!failures.isEmpty()) throw new AssertionError("seed " + seed + ": staging the operations failed: " + failures, failures.getFirst());
        subjects.putAll(staged);
        return froms;
    }

    /** An operation's answer and how long it took. */
    private record Answer(RawApi.Response response, long ms) {
        int status() {
            return response.status();
        }
    }

    /**
     * Runs every operation on its subject, each started {@code delays} ms before a kill of the service
     * (no delays: all start at once, no kill, and each runs to its end); the operations still running
     * at the kill go into {@code inFlight}. Returns the answers that came.
     */
    private static Map<String, Answer> runTogether(Map<String, Subject> subjects, Map<String, Long> delays, Set<String> inFlight)
            throws InterruptedException {
        long killAt = delays.values().stream().mapToLong(Long::longValue).max().orElse(0);
        long start = System.nanoTime();
        var answers = new ConcurrentHashMap<String, Answer>();
        var calls = new LinkedHashMap<String, Thread>();
        var longestFirst = subjects.keySet().stream().sorted(Comparator.comparing((String o) -> delays.getOrDefault(o, 0L)).reversed()).toList();
        for (String operation : longestFirst) {
            LockSupport.parkNanos(start + (killAt - delays.getOrDefault(operation, 0L)) * 1_000_000 - System.nanoTime());
            String id = subjects.get(operation).id();
            calls.put(operation, Thread.ofVirtual().start(() -> {
                long began = System.nanoTime();
                try {
                    var answer = run(operation, id);
                    answers.put(operation, new Answer(answer, (System.nanoTime() - began) / 1_000_000));
                } catch (RuntimeException e) {
                    // the service died under the call
                }
            }));
        }
        if (!delays.isEmpty()) {
            LockSupport.parkNanos(start + killAt * 1_000_000 - System.nanoTime());
            calls.forEach((operation, call) -> {
                if (call.isAlive()) inFlight.add(operation);
            });
            service.kill();
        }
        for (var call : calls.values()) call.join(Duration.ofSeconds(delays.isEmpty() ? 120 : 30));
        return answers;
    }

    /** How a trial kills: after {@code delay} ms of the operation running on {@code call}; what it killed (null: nothing). */
    private interface Killer {
        String kill(Thread call, long delay) throws Exception;
    }

    /**
     * SIGKILL of the service while it builds a template: at a start that finds the installed version
     * is not the recipe's (the test marks it outdated), the service builds the new one aside and swaps
     * it in. Wherever the kill lands, after a restart the template is installed and whole (a sandbox
     * made from it works), nothing of the cut build is left, and the sandboxes made from it before are
     * untouched (their processes go on, their acknowledged writes are kept).
     */
    @Test
    void aKillDuringATemplateBuildLeavesTheTemplateWhole() throws Exception {
        var random = new Random(seed);
        int kills = Integer.getInteger("stasis.kill.template-trials", TEMPLATE_TRIALS);
        Path templates = dataDir.resolve("btrfs/templates");
        var subject = ready(new Subject(null, 0));
        var results = new ArrayList<Trial>();
        long buildMs = 0;
        // The first start is not killed: it measures the build. Then trials until that many kills landed in a build.
        for (int t = 0; results.stream().filter(r -> r.killed() != null).count() < kills && t <= 2 * kills; t++) {
            subject = subject.acknowledge();
            api.close();
            service.kill();
            outdate(templates.resolve("tiny.json"));
            long offset = Files.size(log);
            var starting = ServiceProcess.launch(dataDir, log, Map.of(), serviceFlags());
            long buildStart = awaitLogLine(offset, "building template", Duration.ofSeconds(60));
            if (t == 0) {
                awaitLogLine(offset, "template installed", Duration.ofSeconds(60));
                buildMs = Math.max(20, (System.nanoTime() - buildStart) / 1_000_000);
                service = starting.await();
                api = new RawApi(service.url, Files.readString(dataDir.resolve("root.key")).strip());
                continue;
            }
            long delay = (long) (random.nextDouble() * buildMs * 1.2);
            LockSupport.parkNanos(buildStart + delay * 1_000_000 - System.nanoTime());
            starting.process().destroyForcibly();
            starting.process().waitFor();
            boolean built = logHas(offset, "template installed");
            if (built) buildMs = Math.max(10, delay); // it builds faster than measured: aim within what it took
            restart();
            var problems = check("template-build", "running", subject);
            problems.addAll(templateProblems(templates));
            var trial = new Trial("template-build", "running", delay, built ? null : "the service", problems);
            results.add(trial);
            if (!problems.isEmpty()) {
                System.out.println("RandomKillIT (template) seed " + seed + " trial " + results.size() + ": " + trial);
                subject = ready(new Subject(null, 0));
            }
        }
        report("template", List.of("template-build"), results, Map.of("template-build", buildMs));
        assertThat(results.stream().filter(r -> !r.problems().isEmpty()).map(Trial::toString).toList())
                .as("seed " + seed + ": trials (kills during a template build) that left the template or a sandbox broken").isEmpty();
    }

    /** Makes the installed template look older than its recipe: the next start rebuilds it. */
    private static void outdate(Path sidecar) throws IOException {
        var json = (ObjectNode) new ObjectMapper().readTree(sidecar.toFile());
        json.put("version", "outdated");
        Files.writeString(sidecar, json.toString());
    }

    /** Waits until the service's log, past {@code offset}, has a line containing {@code text}; returns System.nanoTime() then. */
    private static long awaitLogLine(long offset, String text, Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!logHas(offset, text)) {
            if (System.nanoTime() > deadline) throw new AssertionError("no '" + text + "' in " + log + " within " + timeout);
            LockSupport.parkNanos(500_000);
        }
        return System.nanoTime();
    }

    private static boolean logHas(long offset, String text) throws IOException {
        try (var file = new RandomAccessFile(log.toFile(), "r")) {
            if (file.length() <= offset) return false;
            byte[] tail = new byte[(int) (file.length() - offset)];
            file.seek(offset);
            file.readFully(tail);
            return new String(tail, StandardCharsets.UTF_8).contains(text);
        }
    }

    /** The template installed at the recipe's version, nothing of a build left beside it, and a sandbox made from it works. */
    private static List<String> templateProblems(Path templates) throws IOException {
        var problems = new ArrayList<String>();
        for (JsonNode template : api.get("/v1/templates").get("items")) {
            if (template.get("name").asText().equals("tiny") && (!template.path("status").asText().equals("ready")
                    || template.path("version").asText().equals("outdated")))
                problems.add("the template after the restart: " + template);
        }
        try (var entries = Files.list(templates)) {
            var left = entries.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(".")).toList();
            if (!left.isEmpty()) problems.add("left of a build in " + templates + ": " + left);
        }
        var created = api.call("POST", "/v1/sandboxes", CALM);
        if (created.status() != 201) {
            problems.add("a create from the template answered " + created.status() + " " + created.body());
            return problems;
        }
        String id = created.body().get("id").asText();
        String answer = exec(id, "ls /bin | wc -l; busybox true && echo ok");
        if (!answer.endsWith("ok\n")) problems.add("a sandbox made from the template answered " + answer);
        api.call("DELETE", "/v1/sandboxes/" + id, null);
        return problems;
    }

    private void trials(String mode, List<String> operations, int trials, Killer killer) throws Exception {
        var random = new Random(seed);
        var durations = new LinkedHashMap<String, Long>();
        // Killing a tool: where its operation ran one (a delay past the last kills nothing: 40% of the
        // trials did when delays spanned the whole call, restore-durable's downloading first).
        var toolWindows = new HashMap<String, ToolWindow>();
        var results = new ArrayList<Trial>();
        var subject = new Subject(null, 0);
        for (String operation : operations) {
            if (runtime.equals("gvisor") && subject.id() != null) {
                // A gVisor sandbox's saves grow with every process it has started (runsc 2024-07 keeps
                // each one's /proc directory), and its sentry's heap with every save, until the
                // sandbox's memory limit ends it: the counter starts ~40 a second. A subject per operation.
                api.call("DELETE", "/v1/sandboxes/" + subject.id(), null);
                subject = new Subject(null, 0);
            }
            // The operation once without a kill: how long it takes here bounds the delays. A fork from spares
            // takes a few ms, and its first call after a start many more: it is timed at its second.
            String from = null;
            for (int calibration = operation.equals("fork-spares") ? 2 : 1; calibration > 0; calibration--) {
                subject = ready(subject);
                prepare(operation, subject);
                from = from(mode, operation, random);
                api.bringTo(subject.id(), from);
                long start = System.nanoTime();
                var tools = mode.equals("tool") ? new ToolWatch(start) : null;
                run(operation, subject.id());
                durations.put(operation, Math.max(20, (System.nanoTime() - start) / 1_000_000));
                if (tools != null) tools.stop().ifPresent(window -> toolWindows.put(operation, window));
                subject = afterUnkilled(operation, subject.after(from, subject.state()));
            }
            // Until that many kills landed: a tool runs for a part of its operation only, and a delay past it kills nothing.
            for (int t = 0, kills = 0; kills < trials && t < trials * MAX_ATTEMPTS_PER_KILL; t++) {
                subject = ready(subject);
                from = from(mode, operation, random);
                // The write first: the files API wakes a paused sandbox, which would no longer start from its state.
                subject = subject.acknowledge();
                prepare(operation, subject);
                api.bringTo(subject.id(), from);
                var window = toolWindows.get(operation);
                long delay = window != null ? window.delay(random) : (long) (random.nextDouble() * durations.get(operation) * 1.2);
                String id = subject.id();
                var answer = new AtomicReference<RawApi.Response>();
                var call = Thread.ofVirtual().start(() -> {
                    try {
                        answer.set(run(operation, id));
                    } catch (RuntimeException e) {
                        // the service died under the call
                    }
                });
                String killed = killer.kill(call, delay);
                if (killed != null) kills++;
                else if (window != null) toolWindows.put(operation, window.endingBy(delay));
                Set<String> involved = sandboxesOnDisk(); // forks the kill cut short are on disk, in no list
                if (!service.process.isAlive() && killed != null && mode.equals("service")) restart();
                String outage = outage();
                // The state the kill left, before check() starts a stopped sandbox to try it: a stopped
                // subject lost its loop (CI's 'stop' failures: a start by check() hid that, and the next
                // trial trusted a loop that was gone).
                String left = subject.state();
                var problems = check(operation, from, subject);
                if (outage != null) problems.add(outage);
                if (answer.get() != null && answer.get().status() == 500 && answer.get().errorCode().equals("internal"))
                    problems.add("the call answered 500 internal: " + answer.get().body());
                subject = subject.after(from, left);
                if (!problems.isEmpty()) subject = new Subject(null, 0); // start afresh, so one failure does not hide the next ones
                subject = forget(subject);
                problems.addAll(leaks(involved));
                var trial = new Trial(operation, from, delay, killed, problems);
                results.add(trial);
                if (!problems.isEmpty()) System.out.println("RandomKillIT (" + mode + ") seed " + seed + " trial " + results.size() + ": " + trial);
            }
        }
        report(mode, operations, results, durations);
        if (!toolWindows.isEmpty()) System.out.println("RandomKillIT (" + runtime + "), where the tools ran, ms after the call: " + toolWindows);
        assertThat(results.stream().filter(r -> !r.problems().isEmpty()).map(Trial::toString).toList())
                .as("seed " + seed + ": trials (kills of the " + mode + ") that left a sandbox undefined, unusable or without an acknowledged write")
                .isEmpty();
    }

    /** When, in ms after its call began, an operation had a tool running: first and last seen. */
    private record ToolWindow(long firstMs, long lastMs) {
        /** A delay within the window, a tenth past its end (a run may take longer than the one measured). */
        long delay(Random random) {
            return firstMs + (long) (random.nextDouble() * (lastMs - firstMs + 1) * 1.1);
        }

        /** After a delay that found no tool left: the tools end earlier than measured, halfway to that delay. */
        ToolWindow endingBy(long delayMs) {
            return new ToolWindow(firstMs, Math.max(firstMs, (lastMs + Math.min(delayMs, lastMs)) / 2));
        }
    }

    /** Watches, on a thread of its own, for the service's tools while an operation runs. */
    private static final class ToolWatch {
        private final long start;
        private final Thread thread;
        private volatile boolean stopped;
        private long firstMs = -1;
        private long lastMs = -1;

        ToolWatch(long start) {
            this.start = start;
            this.thread = Thread.ofVirtual().start(this::watch);
        }

        private void watch() {
            while (!stopped) {
                if (service.process.descendants().anyMatch(RandomKillIT::isTool)) {
                    lastMs = (System.nanoTime() - start) / 1_000_000;
                    if (firstMs < 0) firstMs = lastMs;
                }
                LockSupport.parkNanos(1_000_000);
            }
        }

        /** The window the tools ran in; empty when none was seen. */
        Optional<ToolWindow> stop() throws InterruptedException {
            stopped = true;
            thread.join();
            return firstMs < 0 ? Optional.empty() : Optional.of(new ToolWindow(firstMs, lastMs));
        }
    }

    /** What the names of this run's files carry: nothing for runc, "-gvisor" for gVisor. */
    private static String suffix() {
        return runtime.equals("runc") ? "" : "-" + runtime;
    }

    private static String comm(ProcessHandle process) {
        try {
            return Files.readString(Path.of("/proc/" + process.pid() + "/comm")).strip();
        } catch (IOException e) {
            return ""; // it ended
        }
    }

    /** The sandbox under test, how many files were acknowledged into it, and whether its counter loop runs. */
    private record Subject(String id, int acknowledged, boolean counting) {
        Subject(String id, int acknowledged) {
            this(id, acknowledged, id != null);
        }

        Subject acknowledge() {
            int n = acknowledged + 1;
            var response = api.call("PUT", "/v1/sandboxes/" + id + "/files?path=/root/ack-" + n, "written " + n);
            if (response.status() != 200) throw new AssertionError("writing ack-" + n + ": " + response.status() + " " + response.body());
            return new Subject(id, n, counting);
        }

        /** The subject's state now ("gone" once deleted). */
        String state() {
            if (id == null) return "gone";
            var found = api.call("GET", "/v1/sandboxes/" + id, null);
            return found.status() == 200 ? found.body().get("state").asText() : "gone";
        }

        /** After a trial that left the subject {@code left}: a stop ends the loop, a start does not bring it back. */
        Subject after(String from, String left) {
            if (id == null) return this;
            return new Subject(id, acknowledged, counting && !left.equals("stopped") && !from.equals("stopped"));
        }
    }

    /**
     * CRIU's network lock left in the sandbox's network namespace (nftables tables named CRIU-*, which
     * drop every packet): a CRIU that died before unlocking leaves it. Empty when there is none.
     */
    private static String networkLock(String id) {
        try {
            String pid = Files.readString(dataDir.resolve("runtime/bundles/" + id + "/init.pid")).strip();
            var listed = ToolRunner.run(List.of("nsenter", "--net=/proc/" + pid + "/ns/net", "nft", "list", "tables"),
                    Duration.ofSeconds(30));
            return listed.stdout().stream().filter(l -> l.contains("CRIU")).collect(Collectors.joining("; "));
        } catch (IOException | ToolRunner.TimedOut e) {
            return "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }

    /** Diagnostics: the processes in the sandbox's cgroup as the host sees them, and runc's pid file. */
    private static String hostView(String id) {
        var out = new StringBuilder();
        try {
            for (String pid : Files.readAllLines(Path.of("/sys/fs/cgroup/pids/stasis/" + id + "/cgroup.procs"))) {
                String cmd = Files.readString(Path.of("/proc/" + pid + "/cmdline")).replace('\0', ' ').strip();
                String ns = Files.readSymbolicLink(Path.of("/proc/" + pid + "/ns/pid")).toString();
                out.append(pid).append(' ').append(ns).append(' ').append(cmd).append(" | ");
            }
            out.append("init.pid=").append(Files.readString(dataDir.resolve("runtime/bundles/" + id + "/init.pid")).strip());
        } catch (IOException | RuntimeException e) {
            out.append(e);
        }
        return out.toString();
    }

    /** A running subject with its counter, made afresh if there is none (the first trial, after a delete or a failure). */
    private static Subject ready(Subject subject) {
        if (subject.id() != null && api.call("GET", "/v1/sandboxes/" + subject.id(), null).status() == 200) {
            String state = api.get("/v1/sandboxes/" + subject.id()).get("state").asText();
            if (state.equals("stopped")) api.post("/v1/sandboxes/" + subject.id() + "/start", null);
            else if (!state.equals("running")) api.post("/v1/sandboxes/" + subject.id() + "/resume", null);
            if (subject.counting()) return subject;
            api.sh(subject.id(), COUNTER);
            Await.until("counting", Duration.ofSeconds(10), () -> !api.sh(subject.id(), "cat /tmp/count 2>/dev/null; true").isBlank());
            return new Subject(subject.id(), subject.acknowledged(), true);
        }
        String id = api.post("/v1/sandboxes", CALM).get("id").asText();
        api.sh(id, COUNTER);
        Await.until("counting", Duration.ofSeconds(10), () -> !api.sh(id, "cat /tmp/count 2>/dev/null; true").isBlank());
        return new Subject(id, 0);
    }

    private static String from(String mode, String operation, Random random) {
        return switch (operation) {
            case "resume" -> mode.equals("tool") ? "hibernated" : List.of("paused", "standby", "hibernated").get(random.nextInt(3));
            case "start" -> "stopped";
            case "hibernate", "standby", "pause" -> random.nextInt(4) == 0 ? "paused" : "running";
            default -> "running";
        };
    }

    private static RawApi.Response run(String operation, String id) {
        return switch (operation) {
            case "checkpoint-memory" -> api.call("POST", "/v1/sandboxes/" + id + "/checkpoints", "{\"memory\": true}");
            case "checkpoint-files" -> api.call("POST", "/v1/sandboxes/" + id + "/checkpoints", "{\"memory\": false}");
            case "fork" -> api.call("POST", "/v1/sandboxes/" + id + "/fork", "{}");
            case "fork-10" -> api.call("POST", "/v1/sandboxes/" + id + "/fork", "{\"count\": 10}");
            case "fork-spares" -> api.call("POST", "/v1/sandboxes/" + id + "/fork", "{\"checkpoint\": \"" + spareCheckpoint + "\", \"count\": 2}");
            case "create" -> api.call("POST", "/v1/sandboxes", CALM);
            case "restore-durable" -> api.call("POST", "/v1/sandboxes", "{\"fromCheckpoint\": \"" + durable + "\"}");
            case "volume-sync" -> api.call("POST", "/v1/volumes/" + volume + "/sync", null);
            case "delete" -> api.call("DELETE", "/v1/sandboxes/" + id, null);
            default -> api.call("POST", "/v1/sandboxes/" + id + "/" + operation, null);
        };
    }

    /** After the calibration run: a delete took the subject, anything else leaves it as the trials expect. */
    private static Subject afterUnkilled(String operation, Subject subject) {
        return forget(operation.equals("delete") ? new Subject(null, 0) : subject);
    }

    /** Removes every sandbox but the subject (forks, created ones) and the spares' checkpoint with its spares, so trials do not pile up. */
    private static Subject forget(Subject subject) {
        return forget(Map.of("", subject)).get("");
    }

    /** The same for many subjects: each one that is still there, or none (null id) in its place. */
    private static Map<String, Subject> forget(Map<String, Subject> subjects) {
        if (spareCheckpoint != null) {
            api.call("DELETE", "/v1/checkpoints/" + spareCheckpoint, null);
            spareCheckpoint = null;
        }
        var kept = subjects.values().stream().map(Subject::id).collect(Collectors.toSet());
        for (JsonNode sandbox : api.get("/v1/sandboxes").get("items")) {
            String id = sandbox.get("id").asText();
            if (!kept.contains(id)) api.call("DELETE", "/v1/sandboxes/" + id, null);
        }
        var left = new LinkedHashMap<String, Subject>();
        subjects.forEach((operation, subject) -> {
            boolean present = subject.id() != null && api.call("GET", "/v1/sandboxes/" + subject.id(), null).status() == 200;
            left.put(operation, present ? subject : new Subject(null, 0));
        });
        return left;
    }

    /** An operation a trial ran, the state its subject started from, and that subject. */
    private record Operated(String operation, String from, Subject subject) {
    }

    /** Everything a restart must hold, for every listed sandbox; the problems found (none when it held). */
    private static List<String> check(String operation, String from, Subject subject) {
        return check(List.of(new Operated(operation, from, subject)));
    }

    /**
     * The same after operations on several subjects: each subject in a state its operation allows, and
     * every listed sandbox checked at once (each waits for its counter).
     */
    private static List<String> check(List<Operated> operated) {
        var problems = Collections.synchronizedList(new ArrayList<String>());
        try {
            var bySubject = new HashMap<String, Operated>();
            for (var o : operated) {
                var found = api.call("GET", "/v1/sandboxes/" + o.subject().id(), null);
                String subjectState = found.status() == 404 ? "gone" : found.body().get("state").asText();
                if (!allowed(o.operation(), o.from()).contains(subjectState))
                    problems.add("the subject of " + o.operation() + " is " + subjectState + " after a kill during " + o.operation() + " from "
                            + o.from() + " (neither its old state nor its new one)");
                if (o.subject().id() != null) bySubject.put(o.subject().id(), o);
            }
            try (var checks = Executors.newVirtualThreadPerTaskExecutor()) {
                for (JsonNode sandbox : api.get("/v1/sandboxes").get("items"))
                    checks.submit(() -> checkSandbox(sandbox, bySubject, problems));
            }
            if (operated.stream().anyMatch(o -> o.operation().equals("volume-sync"))) problems.addAll(checkVolume());
        } catch (RuntimeException | AssertionError e) {
            problems.add("checking failed: " + e);
        }
        return new ArrayList<>(problems);
    }

    /** One listed sandbox: defined, usable, unlocked, and, if a subject or a subject's fork, with its writes and its counter. */
    private static void checkSandbox(JsonNode sandbox, Map<String, Operated> bySubject, List<String> problems) {
        try {
            String id = sandbox.get("id").asText();
            String state = sandbox.get("state").asText();
            var asSubject = bySubject.get(id);
            var parent = bySubject.get(sandbox.path("parentId").asText(""));
            String who = (asSubject != null ? "the subject of " + asSubject.operation() + " " : "sandbox ") + id + " (" + state + ")";
            if (!DEFINED.contains(state)) {
                problems.add(who + ": not a defined state");
                return;
            }
            if (state.equals("stopped")) {
                var started = api.call("POST", "/v1/sandboxes/" + id + "/start", null);
                if (started.status() != 200) problems.add(who + ": start answered " + started.status() + " " + started.body());
            }
            var alive = exec(id, "echo alive");
            if (!alive.equals("alive\n")) {
                Path root = dataDir.resolve("btrfs/roots/" + id);
                problems.add(who + ": exec answered " + alive + " (on the host: /bin/busybox in its root " + Files.exists(root.resolve("bin/busybox"))
                        + ", mounts in its root " + HostLeaks.mountsUnder(root) + ")");
                return;
            }
            String lock = networkLock(id);
            if (!lock.isEmpty()) problems.add(who + ": its network is still locked by CRIU: " + lock);
            boolean restored = durable != null && sandbox.path("checkpointId").asText("").equals(durable);
            if (restored) {
                var mark = api.call("GET", "/v1/sandboxes/" + id + "/files?path=/root/source-mark", null);
                if (mark.status() != 200 || !mark.body().asText().equals("source"))
                    problems.add(who + ": restored from the durable checkpoint without its file: " + mark.status() + " " + mark.body());
            }
            var owner = asSubject != null ? asSubject : parent;
            if (owner != null) {
                for (int n = 1; n <= owner.subject().acknowledged(); n++) {
                    // A fork holds what its parent had when it was forked, the newest write maybe not.
                    if (asSubject == null && n == owner.subject().acknowledged()) continue;
                    var file = api.call("GET", "/v1/sandboxes/" + id + "/files?path=/root/ack-" + n, null);
                    if (file.status() != 200 || !file.body().asText().equals("written " + n))
                        problems.add(who + ": acknowledged write ack-" + n + " is " + file.status() + " " + file.body());
                }
            }
            // Processes: kept in every state but stopped, by the subject (if its loop ran) and by its forks.
            boolean counts = asSubject != null ? asSubject.subject().counting() && !asSubject.from().equals("stopped")
                    : restored || parent != null && parent.subject().counting();
            if (!state.equals("stopped") && counts) {
                String before = exec(id, "cat /tmp/count 2>/dev/null; true").strip();
                if (before.isEmpty()) {
                    problems.add(who + ": its counter is gone");
                    return;
                }
                try {
                    Await.until("the counter of " + id + " to go on", Duration.ofSeconds(10), () -> {
                        String now = exec(id, "cat /tmp/count 2>/dev/null; true").strip();
                        return !now.isEmpty() && Long.parseLong(now) > Long.parseLong(before);
                    });
                } catch (AssertionError | RuntimeException e) {
                    problems.add(who + ": its counter stays at " + before + "; its processes: "
                            + exec(id, "ps -o pid,ppid,stat,args 2>&1; true").replace('\n', '|') + "; on the host: " + hostView(id));
                }
            }
        } catch (RuntimeException | AssertionError e) {
            problems.add("checking " + sandbox.path("id").asText() + " failed: " + e);
        }
    }

    /**
     * Sets up, once, what an operation works on: a durable checkpoint only the blob store holds (its
     * sandbox counted and had a file, then was deleted), or a volume; before each volume-sync, one
     * more file acknowledged into the volume.
     */
    private static void prepare(String operation, Subject subject) {
        if (operation.equals("fork-spares")) {
            spareCheckpoint = api.post("/v1/sandboxes/" + subject.id() + "/checkpoints", "{\"memory\": true, \"spares\": 2}").get("id").asText();
            String checkpoint = spareCheckpoint;
            Await.until("two spares", Duration.ofSeconds(60),
                    () -> api.get("/v1/checkpoints/" + checkpoint).get("spares").get("ready").asInt() == 2);
        }
        if (operation.equals("restore-durable") && durable == null) {
            String source = api.post("/v1/sandboxes", CALM).get("id").asText();
            api.sh(source, COUNTER);
            Await.until("counting", Duration.ofSeconds(10), () -> !api.sh(source, "cat /tmp/count 2>/dev/null; true").isBlank());
            var mark = api.call("PUT", "/v1/sandboxes/" + source + "/files?path=/root/source-mark", "source");
            if (mark.status() != 200) throw new AssertionError("writing the source's mark: " + mark.status() + " " + mark.body());
            durable = api.post("/v1/sandboxes/" + source + "/checkpoints", "{\"memory\": true, \"durable\": true}").get("id").asText();
            api.call("DELETE", "/v1/sandboxes/" + source, null);
        }
        if (operation.equals("volume-sync")) {
            if (volume == null) volume = api.post("/v1/volumes", "{\"name\": \"kill-it\", \"sizeMb\": 64}").get("id").asText();
            int n = volumeAcks + 1;
            var put = api.call("PUT", "/s3/" + volume + "/ack-" + n, "written " + n);
            if (put.status() != 200) throw new AssertionError("writing ack-" + n + " into the volume: " + put.status() + " " + put.body());
            volumeAcks = n;
        }
    }

    /**
     * After a kill during a sync: the volume holds every acknowledged file, a sync made now succeeds (no
     * lock or chain left broken) and restores, on a new volume, with every one of them.
     */
    private static List<String> checkVolume() {
        var problems = new ArrayList<String>();
        for (int n = 1; n <= volumeAcks; n++) {
            var file = api.call("GET", "/s3/" + volume + "/ack-" + n, null);
            if (file.status() != 200 || !file.body().asText().equals("written " + n))
                problems.add("the volume's acknowledged ack-" + n + " is " + file.status() + " " + file.body());
        }
        var sync = api.call("POST", "/v1/volumes/" + volume + "/sync", null);
        if (sync.status() != 200) {
            problems.add("a sync after the restart answered " + sync.status() + " " + sync.body());
            return problems;
        }
        var copy = api.call("POST", "/v1/volumes", "{\"name\": \"kill-it-restored\", \"fromSync\": \"" + sync.body().get("id").asText() + "\"}");
        if (copy.status() != 201) {
            problems.add("restoring the sync made after the restart answered " + copy.status() + " " + copy.body());
            return problems;
        }
        String restored = copy.body().get("id").asText();
        for (int n = 1; n <= volumeAcks; n++) {
            var file = api.call("GET", "/s3/" + restored + "/ack-" + n, null);
            if (file.status() != 200 || !file.body().asText().equals("written " + n))
                problems.add("the restored sync's ack-" + n + " is " + file.status() + " " + file.body());
        }
        api.call("DELETE", "/v1/volumes/" + restored, null);
        return problems;
    }

    /** The sandboxes the service lists. */
    private static Set<String> listed() {
        var ids = new HashSet<String>();
        for (JsonNode sandbox : api.get("/v1/sandboxes").get("items")) ids.add(sandbox.get("id").asText());
        return ids;
    }

    /** Every sandbox with a root or a bundle on disk, recorded or not (a fork cut short by the kill is in no list). */
    private static Set<String> sandboxesOnDisk() throws IOException {
        var ids = new HashSet<String>();
        for (Path dir : List.of(dataDir.resolve("btrfs/roots"), dataDir.resolve("runtime/bundles"))) {
            if (!Files.isDirectory(dir)) continue;
            try (var entries = Files.list(dir)) {
                entries.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("sbx_"))
                        .map(n -> n.replaceFirst("(\\.replaced)?(\\.lineage)?$", "")).forEach(ids::add); // a root put aside, a lineage file
            }
        }
        return ids;
    }

    /**
     * What a trial left of the sandboxes it involved that are gone now (deleted, or never recorded):
     * a root, a bundle, a cgroup or a process. The reconciler may still be at it: up to 15 s.
     */
    private static List<String> leaks(Set<String> involved) {
        var gone = new HashSet<>(involved);
        gone.removeAll(listed());
        gone.removeAll(leaked); // reported by the trial that left them
        var ids = gone.stream().map(SandboxId::new).collect(Collectors.toSet());
        var found = new ArrayList<String>();
        try {
            Await.until("the trial's gone sandboxes to leave nothing", Duration.ofSeconds(15), () -> {
                found.clear();
                try {
                    for (String id : sandboxesOnDisk()) if (gone.contains(id)) found.add("a root or bundle of " + id);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                found.addAll(HostLeaks.cgroupsOf(ids));
                found.addAll(HostLeaks.processesOf(ids));
                found.addAll(HostLeaks.runscSocketsOf(ids));
                for (String mount : HostLeaks.mountsUnder(dataDir))
                    if (gone.stream().anyMatch(mount::contains)) found.add("mount " + mount);
                return found.isEmpty();
            });
            return List.of();
        } catch (AssertionError e) {
            leaked.addAll(gone);
            return List.copyOf(found);
        }
    }

    private static String exec(String id, String script) {
        var body = "{\"cmd\": [\"sh\", \"-c\", " + quote(script) + "]}";
        try {
            var response = api.call("POST", "/v1/sandboxes/" + id + "/exec", body);
            return response.status() == 200 ? response.body().get("stdout").asText() : response.status() + " " + response.body();
        } catch (UncheckedIOException e) {
            return e.toString();
        }
    }

    private static String quote(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    private static void report(String mode, List<String> operations, List<Trial> results, Map<String, Long> durations) throws IOException {
        var lines = new ArrayList<String>();
        for (String operation : operations) {
            var of = results.stream().filter(r -> r.operation().equals(operation)).toList();
            long killed = of.stream().filter(r -> r.killed() != null).count();
            long held = of.stream().filter(r -> r.killed() != null && r.problems().isEmpty()).count();
            lines.add(String.format("%-18s kills %3d  held %3d  nothing to kill %3d  (operation takes ~%d ms)", operation, killed, held,
                    of.size() - killed, durations.get(operation)));
        }
        System.out.println("RandomKillIT (" + runtime + "), kills of the " + mode + ", seed " + seed + ":\n  " + String.join("\n  ", lines));
        Files.write(Path.of("target", "random-kill-it" + suffix() + "-" + mode.replaceAll("[^a-z]+", "-") + "-report.txt"), lines);
    }
}
