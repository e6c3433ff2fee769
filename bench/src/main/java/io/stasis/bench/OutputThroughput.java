package io.stasis.bench;

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
 *       {@code Accept: text/event-stream} (the SDK's {@code execStream}), the call timed whole;</li>
 *   <li>the floor: the same command writing into a file of the sandbox's root, by an exec (what
 *       the process alone costs; the service reads the output from such a file).</li>
 * </ul>
 */
final class OutputThroughput implements Scenario {
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
            double[] exec = context.sampler().run("exec stream " + label, warmup, n, i -> execOnce(sandbox, script, size));
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
                            + " text/event-stream (SDK execStream), decoded bytes / the whole call", Stats.of(exec)),
                    Figure.of("floor.output_write", name(), "MiB/s", "the same command writing into a file of the sandbox's root,"
                            + " timed by an exec: what the process costs alone", Stats.of(write))),
                    Map.of("bytesPerStream", size, "command", script));
        } finally {
            sandbox.delete();
        }
    }

    private static double followOnce(LiveApi live, EventStreams streams, String sandboxId, String script, long size) throws Exception {
        long pid = live.startProcess(sandboxId, script, false);
        var bytes = new AtomicLong();
        var exitAt = new AtomicLong();
        var exitData = new java.util.concurrent.atomic.AtomicReference<String>();
        long start = System.nanoTime();
        var stream = streams.get(outputPath(sandboxId, pid), (type, data, received) -> {
            switch (type) {
                case "stdout", "stderr" -> {
                    var chunk = OutputEvent.parse(data);
                    if (type.equals("stdout")) {
                        long total = bytes.addAndGet(chunk.bytes().length);
                        if (chunk.offsetAfter() != total)
                            throw new IllegalStateException("stdout offset " + chunk.offsetAfter() + " after " + total + " bytes received");
                    }
                }
                case "exit" -> {
                    exitData.set(data);
                    exitAt.set(received);
                }
                case "dropped" -> throw new IllegalStateException("the service dropped output the follower had not read yet: " + data
                        + " (its --process-output-limit is below what the process wrote)");
                default -> {
                }
            }
        });
        stream.ended.get(STREAM_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        if (exitAt.get() == 0) throw new IllegalStateException(stream.what() + " ended without an exit event");
        if (OutputEvent.exitCode(exitData.get()) != 0)
            throw new IllegalStateException("the writing process did not exit with 0: " + exitData.get());
        if (bytes.get() != size) throw new IllegalStateException(stream.what() + " delivered " + bytes.get() + " bytes, not " + size);
        live.forgetProcess(sandboxId, pid);
        return size / MIB / ((exitAt.get() - start) / 1e9);
    }

    private static double execOnce(Sandbox sandbox, String script, long size) {
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
