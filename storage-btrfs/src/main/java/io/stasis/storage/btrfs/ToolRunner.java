package io.stasis.storage.btrfs;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Starts one host tool and waits for it, for the tool classes ({@link Btrfs}, {@link Mounts},
 * {@link LoopDevices}), which own the flags, the timeout and the error mapping. Both pipes are
 * drained on virtual threads (a full pipe would hang the tool), and a tool that outlives its
 * timeout is killed with its descendants.
 */
final class ToolRunner {
    /** Errors quote at most this much of a tool's stderr: the end, where the reason usually is. */
    static final int TAIL_CHARS = 2000;
    private static final int MAX_STDOUT_BYTES = 4 << 20;
    /** Where root's tools live, whatever PATH the service was started with. */
    private static final List<String> SYSTEM_DIRS = List.of("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin");

    /** What a finished tool left behind. */
    record Result(int exitCode, String stdout, String stderr, long millis) {
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

    /** Finds a tool in PATH or the usual system directories; the bare name if it is nowhere. */
    static Path locate(String name) {
        var dirs = new ArrayList<String>();
        String path = System.getenv("PATH");
        if (path != null) dirs.addAll(List.of(path.split(":")));
        dirs.addAll(SYSTEM_DIRS);
        for (String dir : dirs) {
            if (dir.isEmpty()) continue;
            Path candidate = Path.of(dir, name);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) return candidate;
        }
        return Path.of(name);
    }

    static Result run(List<String> argv, Duration timeout) throws IOException, InterruptedException, TimedOut {
        long start = System.nanoTime();
        var builder = new ProcessBuilder(argv).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        builder.environment().put("LC_ALL", "C"); // messages we parse and quote stay in English
        Process process = builder.start();
        try {
            var out = drain(process.getInputStream(), MAX_STDOUT_BYTES);
            var err = drain(process.getErrorStream(), MAX_STDOUT_BYTES);
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                killTree(process);
                throw new TimedOut(argv.getFirst() + " did not finish within " + timeout.toMillis() + " ms; stderr: "
                        + tail(err.getNow("")));
            }
            return new Result(process.exitValue(), join(out), join(err), (System.nanoTime() - start) / 1_000_000);
        } finally {
            if (process.isAlive()) killTree(process); // never leak a tool, also when interrupted
        }
    }

    static String tail(String text) {
        String trimmed = text.strip();
        return trimmed.length() <= TAIL_CHARS ? trimmed : "..." + trimmed.substring(trimmed.length() - TAIL_CHARS);
    }

    private static void killTree(Process process) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
    }

    private static CompletableFuture<String> drain(InputStream in, int limit) {
        var result = new CompletableFuture<String>();
        Thread.ofVirtual().name("tool-pipe").start(() -> {
            try (in) {
                byte[] kept = in.readNBytes(limit);
                in.transferTo(java.io.OutputStream.nullOutputStream()); // keep draining past the limit
                result.complete(new String(kept, StandardCharsets.UTF_8));
            } catch (IOException e) {
                result.complete("");
            }
        });
        return result;
    }

    private static String join(CompletableFuture<String> pipe) throws InterruptedException {
        try {
            // The pipes close when the tool exits, unless it left a child holding them open.
            return pipe.get(5, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            return pipe.getNow("");
        }
    }
}
