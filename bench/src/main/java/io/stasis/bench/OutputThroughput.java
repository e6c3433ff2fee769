package io.stasis.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.stasis.sdk.ExecOutputListener;
import io.stasis.sdk.ExecRequest;
import io.stasis.sdk.ExecResult;
import io.stasis.sdk.Sandbox;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How fast a process's output reaches a client, in MiB/s of decoded bytes: a process in a
 * {@code tiny} sandbox writes {@code outputSize} bytes of text (80-byte lines: a 1 MiB block made by
 * {@code yes | head -c} into {@code /tmp}, then {@code cat} of it again and again, so the writer
 * runs at hundreds of MiB/s and is not what is measured) to its stdout, and the client counts
 * what it decodes from the Server-Sent Events until the {@code exit} event.
 * <ul>
 *   <li>{@code follow}: a background process ({@code POST .../processes}), its output followed
 *       from offset 0 with {@code GET .../processes/{pid}/output?follow=true}, timed from the
 *       request until the {@code exit} event; the process is forgotten afterwards (untimed);</li>
 *   <li>{@code exec}: the same command through {@code POST .../exec} with
 *       {@code Accept: text/event-stream}, read by the same client, the call timed whole;</li>
 *   <li>{@code exec_sdk}: that exec through the Java SDK's {@code execStream}, as an SDK user
 *       gets it (the SDK's own event parser on the calling thread);</li>
 *   <li>the floor: the same command writing into a file of the sandbox's root, by an exec (what
 *       the process alone costs; the service reads the output from such a file).</li>
 * </ul>
 */
final class OutputThroughput implements Scenario {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final double MIB = 1 << 20;
    private static final Duration STREAM_TIMEOUT = Duration.ofMinutes(5);
    /** 79 printable characters and a newline per line: text such as a build log. */
    static final String LINE = "stasis-bench-output-" + "0123456789abcdefghijklmnopqrstuvwxyz".repeat(2).substring(0, 59);

    @Override
    public String name() {
        return "output";
    }

    @Override
    public ScenarioResult run(BenchContext context) throws Exception {
        long size = context.outputSize();
        String label = sizeLabel(size);
        String script = writer(size);
        int warmup = context.counts().warmupOfSlowSeries();
        int n = context.counts().output();
        var service = context.service();
        Sandbox sandbox = service.create("tiny");
        try (var streams = service.live().eventStreams(1)) {
            double[] follow = context.sampler().run("output follow " + label, warmup, n,
                    i -> followOnce(service.live(), streams, sandbox.id(), script, size));
            double[] exec = context.sampler().run("exec stream " + label, warmup, n, i -> execOnce(streams, sandbox.id(), script, size));
            double[] sdk = context.sampler().run("exec stream (SDK) " + label, warmup, n, i -> execSdkOnce(sandbox, script, size));
            double[] write = context.sampler().run("floor: output written to a file " + label, warmup, n, i -> {
                long start = System.nanoTime();
                ExecResult result = sandbox.exec(ExecRequest.builder("sh", "-c", script + " > /root/bench-output.txt")
                        .timeout(STREAM_TIMEOUT).build());
                long end = System.nanoTime();
                if (result.exitCode() != 0) throw new IllegalStateException("writing the output to a file failed: " + result);
                sandbox.exec("rm", "-f", "/root/bench-output.txt");
                return size / MIB / ((end - start) / 1e9);
            });
            return new ScenarioResult(List.of(
                    Figure.of("output_stream.follow", name(), "MiB/s", "a background process writes " + label + " of 80-byte text lines"
                            + " (cat of a 1 MiB block) to stdout; GET .../processes/{pid}/output?follow=true from offset 0, decoded bytes"
                            + " counted at the client from the request until the exit event", Stats.of(follow)),
                    Figure.of("output_stream.exec", name(), "MiB/s", "the same command through POST .../exec with Accept:"
                            + " text/event-stream, read by the same client; decoded bytes / the call until its exit event", Stats.of(exec)),
                    Figure.of("output_stream.exec_sdk", name(), "MiB/s", "that exec through the Java SDK (Sandbox.execStream,"
                            + " its own event parser), decoded bytes / the whole call", Stats.of(sdk)),
                    Figure.of("floor.output_write", name(), "MiB/s", "the same command writing into a file of the sandbox's root,"
                            + " timed by an exec: what the process costs alone", Stats.of(write))),
                    Map.of("bytesPerStream", size, "command", script));
        } finally {
            sandbox.delete();
        }
    }

    private static double followOnce(LiveApi live, EventStreams streams, String sandboxId, String script, long size) throws Exception {
        long pid = live.startProcess(sandboxId, script, false);
        var counter = new Counter();
        long start = System.nanoTime();
        var stream = streams.get(outputPath(sandboxId, pid), counter);
        double rate = rate(stream, counter, start, size);
        live.forgetProcess(sandboxId, pid);
        return rate;
    }

    /** A streamed exec through the same client as the follower: {@code POST .../exec} with {@code Accept: text/event-stream}. */
    private static double execOnce(EventStreams streams, String sandboxId, String script, long size) throws Exception {
        var counter = new Counter();
        String body = JSON.createObjectNode().put("timeoutMs", STREAM_TIMEOUT.toMillis())
                .set("cmd", JSON.createArrayNode().add("sh").add("-c").add(script)).toString();
        long start = System.nanoTime();
        var stream = streams.post("/v1/sandboxes/" + sandboxId + "/exec", body, counter);
        return rate(stream, counter, start, size);
    }

    /** MiB/s from {@code start} until the exit event, once the stream has ended; checks every byte came. */
    private static double rate(EventStreams.Stream stream, Counter counter, long start, long size) throws Exception {
        stream.ended.get(STREAM_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        if (counter.exitAt == 0) throw new IllegalStateException(stream.what() + " ended without an exit event");
        if (OutputEvent.exitCode(counter.exitData) != 0)
            throw new IllegalStateException("the writing process did not exit with 0: " + counter.exitData);
        if (counter.bytes != size) throw new IllegalStateException(stream.what() + " delivered " + counter.bytes + " bytes, not " + size);
        return size / MIB / ((counter.exitAt - start) / 1e9);
    }

    /** Counts the decoded stdout bytes of a stream (on its client's thread) and notes its exit event. */
    private static final class Counter implements EventStreams.Listener {
        private volatile long bytes;
        private volatile long exitAt;
        private volatile String exitData;

        @Override
        public void event(String type, String data, long received) {
            switch (type) {
                case "stdout" -> {
                    var chunk = OutputEvent.parse(data);
                    long total = bytes + chunk.bytes().length;
                    if (chunk.offsetAfter() != total)
                        throw new IllegalStateException("stdout offset " + chunk.offsetAfter() + " after " + total + " bytes received");
                    bytes = total;
                }
                case "exit" -> {
                    exitData = data;
                    exitAt = received;
                }
                case "dropped" -> throw new IllegalStateException("the service dropped output the client had not read yet: " + data
                        + " (its --process-output-limit is below what the process wrote)");
                default -> {
                    // stderr stays empty; other events do not count
                }
            }
        }
    }

    private static double execSdkOnce(Sandbox sandbox, String script, long size) {
        var bytes = new AtomicLong();
        var listener = new ExecOutputListener() {
            @Override
            public void onStdout(byte[] chunk) {
                bytes.addAndGet(chunk.length);
            }
        };
        long start = System.nanoTime();
        ExecResult result = sandbox.execStream(ExecRequest.builder("sh", "-c", script).timeout(STREAM_TIMEOUT).build(), listener);
        long end = System.nanoTime();
        if (result.exitCode() != 0) throw new IllegalStateException("the streamed command failed: exit " + result.exitCode());
        if (bytes.get() != size) throw new IllegalStateException("exec stream delivered " + bytes.get() + " bytes, not " + size);
        return size / MIB / ((end - start) / 1e9);
    }

    /** A shell script writing {@code size} bytes of 80-byte text lines to stdout, fast. */
    static String writer(long size) {
        long blocks = size >> 20;
        long rest = size & ((1 << 20) - 1);
        return "yes " + LINE + " | head -c 1048576 > /tmp/bench-block && for i in $(seq " + blocks + "); do cat /tmp/bench-block; done"
                + (rest == 0 ? "" : " && head -c " + rest + " /tmp/bench-block");
    }

    static String outputPath(String sandboxId, long pid) {
        return "/v1/sandboxes/" + sandboxId + "/processes/" + pid + "/output?follow=true&offset=0";
    }

    /** {@code 200MiB}, {@code 10MiB}, or bytes when not a whole number of MiB. */
    static String sizeLabel(long bytes) {
        return bytes % (1 << 20) == 0 ? (bytes >> 20) + "MiB" : bytes + "B";
    }
}
