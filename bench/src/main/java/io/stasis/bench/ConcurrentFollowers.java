package io.stasis.bench;

import com.sun.management.OperatingSystemMXBean;
import io.stasis.sdk.Sandbox;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * Many clients following output at once on one host: N Server-Sent Event streams
 * ({@code GET .../processes/{pid}/output?follow=true}) on 8 long-running processes spread over 4
 * {@code tiny} sandboxes (each prints {@code tick} every second and copies its stdin to its
 * stdout), held through 4 HTTP/1.1 clients (one connection per stream), opened at most
 * {@code --followers-in-flight} at a time (default 32: the service listens with an accept backlog
 * of 50, and a burst of connections beyond it waits for SYN retransmissions of 1, 3, 7 s...).
 * Measured: the time to open them all (until each has its first event), how many are still held
 * after 5 s of settling and a 10 s hold (1 s, without settling, below 200 followers), what this
 * JVM (the service and the client) costs meanwhile (RSS, OS threads, open file descriptors, CPU
 * while settling and while held), and the delivery of one line written
 * afterwards to each process's stdin: from the start of that stdin call until the line's event
 * arrives, per follower.
 */
final class ConcurrentFollowers implements Scenario {
    /** The goal: streams held at once on one host. */
    static final int TARGET_FOLLOWERS = 1000;
    private static final int SANDBOXES = 4;
    private static final int PROCESSES_PER_SANDBOX = 2;
    private static final int CLIENTS = 4;
    private static final Duration OPEN_WAIT = Duration.ofMinutes(2);
    /** The goal for holding them: % of one core. */
    private static final double TARGET_CPU_HELD = 20;
    /**
     * Before the measured hold: the JIT compiles what opening them made hot (measured, 2 cores:
     * the compiler threads took 16% of a core of the JVM's 26% over the first 4 s, 3% of its 13%
     * from 5 s on), a cost of having opened them, not of holding them.
     */
    private static final Duration SETTLE = Duration.ofSeconds(5);
    private static final Duration HOLD = Duration.ofSeconds(10);
    /** The hold of a small run (the test suite's smoke run has 10 followers), without settling. */
    private static final Duration SHORT_HOLD = Duration.ofSeconds(1);
    private static final Duration DELIVERY_WAIT = Duration.ofSeconds(30);
    private static final String TICKER = "(while :; do echo tick; sleep 1; done) & exec cat";
    private static final double MIB = 1 << 20;

    @Override
    public String name() {
        return "followers";
    }

    @Override
    public ScenarioResult run(BenchContext context) throws Exception {
        int n = context.counts().followers();
        var service = context.service();
        var live = service.live();
        var progress = context.progress();
        var sandboxes = new ArrayList<Sandbox>();
        try {
            var processes = new ArrayList<Followed>();
            for (int s = 0; s < Math.min(SANDBOXES, n); s++) {
                Sandbox sandbox = service.create("tiny");
                sandboxes.add(sandbox);
                for (int p = 0; p < PROCESSES_PER_SANDBOX; p++)
                    processes.add(new Followed(sandbox.id(), live.startProcess(sandbox.id(), TICKER, true)));
            }
            Usage before = Usage.now();
            var followers = new Follower[n];
            try (var streams = live.eventStreams(CLIENTS)) {
                int inFlight = Math.min(n, context.followersInFlight());
                progress.say("followers: opening %d output streams on %d processes in %d sandboxes, %d at a time", n, processes.size(),
                        sandboxes.size(), inFlight);
                long overflowsBefore = listenOverflows();
                var opening = new Semaphore(inFlight);
                long start = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    var follower = new Follower(processes.get(i % processes.size()));
                    followers[i] = follower;
                    if (!opening.tryAcquire(OPEN_WAIT.toMillis(), TimeUnit.MILLISECONDS))
                        throw new IllegalStateException("no stream opened for " + OPEN_WAIT + " while opening " + n);
                    follower.stream = streams.get(OutputThroughput.outputPath(follower.process.sandboxId(), follower.process.pid()),
                            follower::event);
                    follower.stream.ended.whenComplete((v, failure) -> follower.firstEvent.complete(-1L));
                    follower.firstEvent.whenComplete((at, failure) -> opening.release());
                }
                Map<String, Integer> failures = new TreeMap<>();
                double[] openEach = awaitOpened(followers, failures);
                double openAll = Format.millis(Arrays.stream(followers).filter(Follower::isOpen)
                        .mapToLong(f -> f.firstEvent.join()).max().orElse(start) - start);
                long overflows = listenOverflows() - overflowsBefore;
                Duration settle = n >= 200 ? SETTLE : Duration.ZERO;
                Duration hold = n >= 200 ? HOLD : SHORT_HOLD;
                progress.say("followers: %d open after %s ms (%d connections overflowed a listen queue meanwhile); holding them %d s"
                        + " after %d s of settling", openEach.length, Format.number(openAll), overflows, hold.toSeconds(), settle.toSeconds());
                var settling = CpuWindow.over(settle);
                var held = CpuWindow.over(hold);
                Usage heldUsage = Usage.now();
                long stillOpen = Arrays.stream(followers).filter(f -> f.isOpen() && !f.stream.ended.isDone()).count();
                for (var f : followers) {
                    // Those that never opened are counted already.
                    if (f.isOpen() && f.stream.ended.isCompletedExceptionally())
                        failures.merge("dropped while held: " + describe(f.stream.ended), 1, Integer::sum);
                }

                double[] delivery = deliver(live, processes, followers, (int) stillOpen, progress);
                // End the processes and let every stream end with them, so the service lets go of them before the sandboxes go.
                for (var p : processes) live.signalProcess(p.sandboxId(), p.pid(), "KILL");
                long endedCleanly = awaitEnded(followers);
                progress.say("followers: %d of %d streams ended with their process", endedCleanly, n);
                var figures = new ArrayList<Figure>();
                boolean judged = n >= TARGET_FOLLOWERS;
                Figure heldFigure = Figure.of("followers.held", name(), "count", n + " output streams opened at once; those still open"
                        + " after a " + hold.toSeconds() + " s hold", Stats.single(stillOpen));
                figures.add(judged ? heldFigure.withTarget(Target.atLeast(TARGET_FOLLOWERS)) : heldFigure);
                Figure reached = Figure.of("followers.reached", name(), "count", "followers that received a line written afterwards"
                        + " to every process's stdin", Stats.single(delivery.length));
                figures.add(judged ? reached.withTarget(Target.atLeast(TARGET_FOLLOWERS)) : reached);
                figures.add(Figure.of("followers.open_all", name(), "ms", "from the first request until all " + n
                        + " streams had their first event, " + inFlight + " opening at a time", Stats.single(openAll)));
                if (openEach.length > 0)
                    figures.add(Figure.of("followers.open_each", name(), "ms", "each stream, from its request until its first event,"
                            + " " + inFlight + " opening at a time", Stats.of(openEach)));
                if (delivery.length > 0)
                    figures.add(Figure.of("followers.delivery", name(), "ms", "a line written to each process's stdin (POST .../stdin,"
                            + " one process after the other) until its event arrives, per follower", Stats.of(delivery)));
                figures.add(Figure.of("followers.service_rss", name(), "MiB", "RSS of this JVM (the service and the client) while"
                        + " they are held", Stats.single(heldUsage.rss() / MIB)));
                figures.add(Figure.of("followers.rss_per_follower", name(), "KiB", "RSS growth of this JVM from before opening them,"
                        + " per follower held", Stats.single(stillOpen == 0 ? 0 : (heldUsage.rss() - before.rss()) / 1024.0 / stillOpen)));
                figures.add(Figure.of("followers.threads", name(), "count", "OS threads of this JVM while they are held (the service"
                        + " serves each stream on a virtual thread, which the kernel does not count)", Stats.single(heldUsage.threads())));
                figures.add(Figure.of("followers.open_fds", name(), "count", "file descriptors open in this JVM while they are held"
                        + " (both ends of every connection, the service's own)", Stats.single(heldUsage.fds())));
                if (!settle.isZero())
                    figures.add(Figure.of("followers.cpu_settling", name(), "%", "CPU of this JVM over the first " + settle.toSeconds()
                            + " s after they opened, the JIT compiling what opening them made hot (% of one core)",
                            Stats.single(settling.percentOfACore())));
                Figure cpuHeld = Figure.of("followers.cpu_held", name(), "%", "CPU of this JVM (the service and the client) while they"
                        + " are held, idle but for one tick a second per process (% of one core over " + hold.toSeconds() + " s"
                        + (settle.isZero() ? "" : ", after the settling") + ")", Stats.single(held.percentOfACore()));
                figures.add(judged ? cpuHeld.withTarget(Target.atMost(TARGET_CPU_HELD)) : cpuHeld);
                Map<String, Object> details = new LinkedHashMap<>();
                details.put("requested", n);
                details.put("sandboxes", sandboxes.size());
                details.put("processes", processes.size());
                details.put("httpClients", CLIENTS);
                details.put("openingAtOnce", inFlight);
                details.put("listenOverflowsWhileOpening", overflows);
                details.put("before", before.toMap());
                details.put("held", heldUsage.toMap());
                details.put("jitMsSettling", settling.compilingMs());
                details.put("jitMsHeld", held.compilingMs());
                details.put("fdLimit", fdLimit());
                details.put("failures", failures);
                details.put("endedWithTheirProcess", endedCleanly);
                if (!judged) details.put("targetNotJudged", "only " + n + " followers asked; the target is " + TARGET_FOLLOWERS);
                return new ScenarioResult(figures, details);
            }
        } finally {
            for (Sandbox sandbox : sandboxes) sandbox.delete();
        }
    }

    /** Waits for every stream's first event; returns each opened one's time to it, and counts why the others failed. */
    private static double[] awaitOpened(Follower[] followers, Map<String, Integer> failures) throws InterruptedException {
        long deadline = System.nanoTime() + OPEN_WAIT.toNanos();
        var times = new ArrayList<Double>();
        for (var f : followers) {
            try {
                long opened = f.firstEvent.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (opened >= 0) times.add(Format.millis(opened - f.stream.started()));
                else failures.merge("ended before its first event: " + describe(f.stream.ended), 1, Integer::sum);
            } catch (ExecutionException e) {
                failures.merge(describe(e.getCause()), 1, Integer::sum);
            } catch (TimeoutException e) {
                failures.merge("not open after " + OPEN_WAIT, 1, Integer::sum);
            }
        }
        return times.stream().mapToDouble(Double::doubleValue).toArray();
    }

    /** Waits (a bounded time) until every stream has ended; returns how many ended normally. */
    private static long awaitEnded(Follower[] followers) throws InterruptedException {
        long deadline = System.nanoTime() + DELIVERY_WAIT.toNanos();
        for (var f : followers) {
            try {
                f.stream.ended.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (ExecutionException | TimeoutException e) {
                // counted below
            }
        }
        return Arrays.stream(followers).filter(f -> f.stream.ended.isDone() && !f.stream.ended.isCompletedExceptionally()).count();
    }

    /** Writes one line to every process's stdin and returns each follower's delay until it arrived. */
    private static double[] deliver(LiveApi live, List<Followed> processes, Follower[] followers, int open, Progress progress)
            throws InterruptedException {
        String token = "delivered-" + System.nanoTime();
        var arrived = new CountDownLatch(open);
        for (var f : followers) f.expect(token, arrived);
        for (var p : processes) {
            p.written = System.nanoTime();
            live.writeStdin(p.sandboxId(), p.pid(), (token + "\n").getBytes(StandardCharsets.US_ASCII));
        }
        boolean all = arrived.await(DELIVERY_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        var delays = Arrays.stream(followers).filter(f -> f.arrivedAt.get() != 0)
                .mapToDouble(f -> Format.millis(f.arrivedAt.get() - f.process.written)).toArray();
        progress.say("followers: the line reached %d of %d open streams%s", delays.length, open, all ? "" : " within " + DELIVERY_WAIT);
        return delays;
    }

    private static String describe(CompletableFuture<?> failed) {
        try {
            failed.join();
            return "ended";
        } catch (RuntimeException e) {
            return describe(e.getCause() == null ? e : e.getCause());
        }
    }

    private static String describe(Throwable t) {
        String message = t.getClass().getSimpleName() + ": " + t.getMessage();
        return message.length() > 200 ? message.substring(0, 200) : message;
    }

    /**
     * The host's count of connections dropped because a listen queue was full (TcpExt
     * ListenOverflows): host-wide, but while the streams open it is the service's queue that fills.
     */
    private static long listenOverflows() {
        try {
            List<String> lines = Files.readAllLines(Path.of("/proc/net/netstat"));
            for (int i = 0; i + 1 < lines.size(); i++) {
                if (!lines.get(i).startsWith("TcpExt:")) continue;
                List<String> names = List.of(lines.get(i).split("\\s+"));
                int at = names.indexOf("ListenOverflows");
                if (at > 0) return Long.parseLong(lines.get(i + 1).split("\\s+")[at]);
            }
            return 0;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** This JVM's CPU over a wait: all of it, and the JIT's compile time within it. */
    private record CpuWindow(long cpuNanos, long wallNanos, long compilingMs) {
        static CpuWindow over(Duration wait) {
            var compiler = ManagementFactory.getCompilationMXBean();
            long cpuBefore = processCpuNanos();
            long compiledBefore = compiler.getTotalCompilationTime();
            long start = System.nanoTime();
            OutputLatency.pause(wait.toNanos());
            return new CpuWindow(processCpuNanos() - cpuBefore, System.nanoTime() - start, compiler.getTotalCompilationTime() - compiledBefore);
        }

        double percentOfACore() {
            return 100.0 * cpuNanos / wallNanos;
        }

        private static long processCpuNanos() {
            var bean = ManagementFactory.getOperatingSystemMXBean();
            if (bean instanceof OperatingSystemMXBean os) return os.getProcessCpuTime();
            throw new IllegalStateException("this JVM does not report its CPU time");
        }
    }

    private static String fdLimit() {
        try (Stream<String> lines = Files.lines(Path.of("/proc/self/limits"))) {
            return lines.filter(l -> l.startsWith("Max open files")).map(l -> l.replaceAll("\\s+", " ").strip()).findFirst().orElse("?");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A process being followed, and when the line for it was written. */
    private static final class Followed {
        private final String sandboxId;
        private final long pid;
        volatile long written;

        Followed(String sandboxId, long pid) {
            this.sandboxId = sandboxId;
            this.pid = pid;
        }

        String sandboxId() {
            return sandboxId;
        }

        long pid() {
            return pid;
        }
    }

    /** One stream; its listener runs on its HTTP client's thread and only looks for the expected line. */
    private static final class Follower {
        private final Followed process;
        private EventStreams.Stream stream;
        private volatile String token;
        private volatile CountDownLatch arrived;
        private final AtomicLong arrivedAt = new AtomicLong();
        /** {@link System#nanoTime()} of its first event (the backlog of ticks): the stream is live; -1 if it ended first. */
        private final CompletableFuture<Long> firstEvent = new CompletableFuture<>();
        private String tail = "";

        Follower(Followed process) {
            this.process = process;
        }

        boolean isOpen() {
            return firstEvent.isDone() && firstEvent.join() >= 0;
        }

        void expect(String line, CountDownLatch latch) {
            arrived = latch;
            token = line;
        }

        void event(String type, String data, long received) {
            firstEvent.complete(received);
            String expected = token;
            if (!type.equals("stdout") || expected == null || arrivedAt.get() != 0) return;
            String text = tail + OutputEvent.parse(data).text();
            if (text.contains(expected)) {
                if (arrivedAt.compareAndSet(0, received)) arrived.countDown();
            } else {
                tail = text.substring(Math.max(0, text.length() - expected.length()));
            }
        }
    }

    /** What this JVM holds at one moment. */
    private record Usage(long rss, long threads, long fds) {
        static Usage now() {
            try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
                return new Usage(HostMemory.ownRss(), HostMemory.ownThreads(), fds.count());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        Map<String, Object> toMap() {
            return Map.of("rssBytes", rss, "threads", threads, "openFds", fds);
        }
    }
}
