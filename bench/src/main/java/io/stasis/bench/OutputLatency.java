package io.stasis.bench;

import io.stasis.sdk.ExecResult;
import io.stasis.sdk.Sandbox;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * How long a line written inside a sandbox takes to reach a client following the process's
 * output ({@code GET .../processes/{pid}/output?follow=true}, Server-Sent Events), two ways:
 * <ul>
 *   <li><b>stdin to event</b>: a {@code cat} started with {@code "stdin": true}; the client posts a
 *       line to {@code .../stdin} and times it, on its own clock, until the {@code stdout} event
 *       carrying it arrives. It includes the stdin path (HTTP call, the service writing the FIFO,
 *       {@code cat} reading and writing it). Lines are spaced by a random 0-100 ms pause, so the
 *       service finds both busy and quiet streams (it polls the output faster while it flows);</li>
 *   <li><b>write to event</b>: only the output path. A shell loop runs busybox {@code adjtimex}
 *       every 20 ms, which prints the kernel's {@code CLOCK_REALTIME} in microseconds (the sandbox
 *       shares the host's clock: there are no time namespaces); the client subtracts it from its
 *       own {@code Instant.now()} when the event arrives. The time is read just before the line is
 *       written (adjtimex prints it when it exits). Lines written before the stream's first event
 *       arrived are not counted.</li>
 * </ul>
 */
final class OutputLatency implements Scenario {
    /** The goal for a line written inside to reach the client, in milliseconds. */
    static final double TARGET_MS = 5;
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final long MAX_GAP_NANOS = 100_000_000;
    private static final String CLOCK_LOOP = "while :; do adjtimex; usleep 20000; done";

    @Override
    public String name() {
        return "output-latency";
    }

    @Override
    public ScenarioResult run(BenchContext context) throws Exception {
        var service = context.service();
        var figures = new ArrayList<Figure>();
        Map<String, Object> details = new LinkedHashMap<>();
        Sandbox sandbox = service.create("tiny");
        try (var streams = service.live().eventStreams(1)) {
            figures.addAll(stdinToEvent(context, streams, sandbox.id()));
            ExecResult probe = sandbox.exec("adjtimex");
            if (probe.stdout().contains("time.tv_usec")) {
                figures.add(writeToEvent(context, streams, sandbox.id()));
            } else {
                details.put("skipped", Map.of("output_latency.write_to_event",
                        "busybox adjtimex cannot read the clock in the sandbox: exit " + probe.exitCode() + ", " + probe.stderr().strip()));
            }
            details.put("gapBetweenLinesMs", "uniform 0-100 (stdin to event); 20 ms loop (write to event)");
            return new ScenarioResult(figures, details);
        } finally {
            sandbox.delete();
        }
    }

    private List<Figure> stdinToEvent(BenchContext context, EventStreams streams, String sandboxId) throws Exception {
        var live = context.service().live();
        long pid = live.startProcess(sandboxId, "exec cat", true);
        var seen = new StringBuilder();
        var waiting = new AtomicReference<Pending>();
        // The stream's response begins with its first event: it opens with the first line.
        var stream = streams.get(OutputThroughput.outputPath(sandboxId, pid), (type, data, received) -> {
            if (!type.equals("stdout")) return;
            synchronized (seen) {
                seen.append(OutputEvent.parse(data).text());
                var pending = waiting.get();
                if (pending == null) return;
                int at = seen.indexOf(pending.token());
                if (at < 0) return;
                seen.delete(0, at + pending.token().length());
                pending.arrived().complete(received);
            }
        });
        var random = new SplittableRandom(42);
        int n = context.counts().outputLatency();
        double[] calls = new double[n];
        double[] latencies = context.sampler().run("stdin line -> stdout event", context.counts().warmup(), n, i -> {
            pause(random.nextLong(MAX_GAP_NANOS));
            String token = "<line " + i + " " + System.nanoTime() + ">";
            var pending = new Pending(token, new CompletableFuture<>());
            waiting.set(pending);
            long start = System.nanoTime();
            live.writeStdin(sandboxId, pid, (token + "\n").getBytes(StandardCharsets.US_ASCII));
            long written = System.nanoTime();
            long arrived;
            try {
                arrived = pending.arrived().get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                throw new IllegalStateException("no stdout event carried " + token + " within " + WAIT + (stream.ended.isDone()
                        ? "; the stream had ended: " + stream.ended.handle((v, t) -> String.valueOf(t)).join() : ""), e);
            }
            if (i >= 0) calls[i] = Format.millis(written - start);
            return Format.millis(arrived - start);
        });
        end(live, sandboxId, pid, stream);
        return List.of(
                Figure.of("output_latency.stdin_to_event", name(), "ms", "a line POSTed to .../processes/{pid}/stdin of a `cat` until"
                        + " the stdout event carrying it arrives on its followed output (client clock; includes the stdin path;"
                        + " lines 0-100 ms apart)", Stats.of(latencies)).withTarget(Target.atMost(TARGET_MS)),
                Figure.of("output_latency.stdin_call", name(), "ms", "the POST .../stdin call alone, until it answers",
                        Stats.of(calls)));
    }

    private Figure writeToEvent(BenchContext context, EventStreams streams, String sandboxId) throws Exception {
        var live = context.service().live();
        int warmup = context.counts().warmup();
        int n = context.counts().outputLatency();
        var clock = new ClockLines(warmup, n);
        long pid = live.startProcess(sandboxId, CLOCK_LOOP, false);
        context.progress().say("adjtimex line -> stdout event: %d warm-up + %d measured, one every ~20 ms", warmup, n);
        var stream = streams.get(OutputThroughput.outputPath(sandboxId, pid), (type, data, received) -> {
            if (type.equals("stdout")) clock.take(OutputEvent.parse(data).text(), Instant.now());
        });
        stream.opened.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        double[] latencies;
        try {
            latencies = clock.done.get(WAIT.toMillis() + n * 100L, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new IllegalStateException("the clock lines did not all arrive in time" + (stream.ended.isDone()
                    ? "; the stream had ended: " + stream.ended.handle((v, t) -> String.valueOf(t)).join() : ""), e);
        }
        end(live, sandboxId, pid, stream);
        context.progress().say("adjtimex line -> stdout event: p50 %s p95 %s", Format.number(Stats.of(latencies).p50()),
                Format.number(Stats.of(latencies).p95()));
        return Figure.of("output_latency.write_to_event", name(), "ms", "a line written by a process in the sandbox (busybox adjtimex"
                + " every 20 ms, carrying CLOCK_REALTIME in us) until its stdout event arrives on the followed output"
                + " (the client's Instant.now() minus that time: the output path alone)", Stats.of(latencies))
                .withTarget(Target.atMost(TARGET_MS));
    }

    /**
     * Ends a followed process and waits for its stream to end with it: the service then closes
     * what it holds for the stream (a stream merely left would hold it until a write fails).
     */
    static void end(LiveApi live, String sandboxId, long pid, EventStreams.Stream stream) throws InterruptedException {
        live.signalProcess(sandboxId, pid, "KILL");
        try {
            stream.ended.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException(stream.what() + " did not end with its process: " + e, e);
        }
    }

    private record Pending(String token, CompletableFuture<Long> arrived) {
    }

    /**
     * Reads {@code time.tv_sec:} / {@code time.tv_usec:} pairs from adjtimex's output as it
     * arrives and keeps the delay of each until it has enough. Lines written before the first
     * event arrived are not counted: that event carries the backlog written while the stream was
     * being set up, whose delay is the setup's. While the kernel's clock is in nanosecond mode
     * ({@code STA_NANO} in {@code status:}, set by some time daemons), {@code tv_usec} holds
     * nanoseconds: read as microseconds, the delays came out hundreds of seconds off.
     */
    static final class ClockLines {
        private static final long STA_NANO = 0x2000;
        private final int skip;
        private final double[] samples;
        private final StringBuilder partial = new StringBuilder();
        private long seconds = -1;
        private boolean nanoseconds;
        private long countFrom = Long.MAX_VALUE;
        private int skipped;
        private int taken;
        final CompletableFuture<double[]> done = new CompletableFuture<>();

        ClockLines(int skip, int n) {
            this.skip = skip;
            this.samples = new double[n];
        }

        synchronized void take(String text, Instant arrived) {
            if (countFrom == Long.MAX_VALUE) countFrom = micros(arrived);
            partial.append(text);
            int newline;
            while ((newline = partial.indexOf("\n")) >= 0) {
                String line = partial.substring(0, newline).strip();
                partial.delete(0, newline + 1);
                if (line.startsWith("status:")) {
                    nanoseconds = (Long.parseLong(line.substring("status:".length()).strip().split("\\s+")[0]) & STA_NANO) != 0;
                } else if (line.startsWith("time.tv_sec:")) {
                    seconds = Long.parseLong(line.substring("time.tv_sec:".length()).strip());
                } else if (line.startsWith("time.tv_usec:") && seconds >= 0) {
                    long fraction = Long.parseLong(line.substring("time.tv_usec:".length()).strip());
                    long written = seconds * 1_000_000 + (nanoseconds ? fraction / 1000 : fraction);
                    seconds = -1;
                    if (written < countFrom || done.isDone()) continue;
                    if (skipped < skip) {
                        skipped++;
                        continue;
                    }
                    samples[taken++] = (micros(arrived) - written) / 1000.0;
                    if (taken == samples.length) done.complete(samples);
                }
            }
        }
    }

    private static long micros(Instant t) {
        return t.getEpochSecond() * 1_000_000 + t.getNano() / 1000;
    }

    /** Waits that long (an uncounted pause between two samples). */
    static void pause(long nanos) {
        long deadline = System.nanoTime() + nanos;
        for (long left = nanos; left > 0; left = deadline - System.nanoTime()) LockSupport.parkNanos(left);
    }
}
