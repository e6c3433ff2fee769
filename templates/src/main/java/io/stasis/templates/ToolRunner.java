package io.stasis.templates;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * Starts one host tool and waits for it, for the tool classes ({@link Debootstrap}, {@link Tar},
 * {@link Busybox}, {@link Mounts}), which own the flags, the timeout and the error mapping. Both
 * pipes are read line by line on virtual threads (a full pipe would hang the tool); a tool that
 * outlives its timeout is killed with its descendants.
 */
final class ToolRunner {
    static final int TAIL_LINES = 30;
    private static final int TAIL_CHARS = 3000;
    private static final int MAX_OUTPUT_LINES = 100_000;
    private static final String SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

    /** What a finished tool left behind: its output, or the last lines of a long one. */
    record Result(int exitCode, List<String> stdout, List<String> stderr, long millis) {
        String stdoutText() {
            return String.join("\n", stdout);
        }

        String stderrTail() {
            return tail(stderr);
        }
    }

    /** The tool did not finish in time and was killed. */
    static final class TimedOut extends Exception {
        TimedOut(String message) {
            super(message);
        }
    }

    private ToolRunner() {
    }

    /** Finds a tool in the system directories; the bare name if it is nowhere. */
    static Path locate(String name) {
        for (String dir : SYSTEM_PATH.split(":")) {
            Path candidate = Path.of(dir, name);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) return candidate;
        }
        return Path.of(name);
    }

    static Result run(List<String> argv, Duration timeout) throws IOException, InterruptedException, TimedOut {
        return run(argv, timeout, line -> { });
    }

    /**
     * Runs {@code argv} with stdin from /dev/null, the C locale and the system PATH (tools like
     * debootstrap and tar start helpers of their own). {@code lines} sees every output line of
     * either stream as it comes.
     */
    static Result run(List<String> argv, Duration timeout, Consumer<String> lines) throws IOException, InterruptedException, TimedOut {
        long start = System.nanoTime();
        var builder = new ProcessBuilder(argv).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        builder.environment().put("LC_ALL", "C");
        builder.environment().put("PATH", SYSTEM_PATH);
        Process process = builder.start();
        try {
            var out = drain(process.getInputStream(), lines, MAX_OUTPUT_LINES);
            var err = drain(process.getErrorStream(), lines, TAIL_LINES * 4);
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                killTree(process);
                throw new TimedOut(argv.getFirst() + " did not finish within " + timeout.toSeconds() + " s; last output: "
                        + tail(err.getNow(List.of())));
            }
            return new Result(process.exitValue(), join(out), join(err), (System.nanoTime() - start) / 1_000_000);
        } finally {
            if (process.isAlive()) killTree(process); // never leak a tool, also when interrupted
        }
    }

    static String tail(List<String> lines) {
        var last = lines.subList(Math.max(0, lines.size() - TAIL_LINES), lines.size());
        String text = String.join("\n", last).strip();
        return text.length() <= TAIL_CHARS ? text : "..." + text.substring(text.length() - TAIL_CHARS);
    }

    private static void killTree(Process process) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
    }

    /** Keeps the last {@code keep} lines. */
    private static CompletableFuture<List<String>> drain(InputStream in, Consumer<String> listener, int keep) {
        var result = new CompletableFuture<List<String>>();
        Thread.ofVirtual().name("tool-pipe").start(() -> {
            var kept = new ArrayDeque<String>();
            try (var reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                for (String line; (line = reader.readLine()) != null; ) {
                    if (kept.size() == keep) kept.removeFirst();
                    kept.addLast(line);
                    try {
                        listener.accept(line);
                    } catch (RuntimeException ignored) {
                        // a broken progress callback must not stall the pipe
                    }
                }
            } catch (IOException e) {
                // the process went away; what we have is what there is
            }
            result.complete(new ArrayList<>(kept));
        });
        return result;
    }

    private static List<String> join(CompletableFuture<List<String>> pipe) throws InterruptedException {
        try {
            // The pipes close when the tool exits, unless it left a child holding them open.
            return pipe.get(5, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            return pipe.getNow(List.of());
        }
    }
}
