package io.stasis.bench;

import io.stasis.host.ToolRunner;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The only class of the benchmark that runs {@code btrfs send} (and {@code btrfs subvolume sync},
 * which the service's {@code Btrfs} lacks too): the stream of a read-only snapshot, whole or
 * against a parent, handed to a reader as it is produced (nothing on disk).
 * The service's own send comes with durable checkpoints; this one only feeds the blob-dedup
 * scenario. stderr goes to a log file, whose tail a failure quotes.
 */
final class BtrfsSend {
    private final Path btrfs;
    private final Path logDir;
    private final Duration timeout;

    BtrfsSend(Path logDir, Duration timeout) {
        this.btrfs = ToolRunner.locate("btrfs");
        this.logDir = logDir;
        this.timeout = timeout;
    }

    /**
     * Runs {@code btrfs send [-p parent] snapshot} and gives its stdout to {@code reader}, which
     * must read it to its end.
     * <p>On success: what the reader returned, once btrfs has exited 0.
     * <p>On failure (btrfs exits non-zero, outlives the timeout, or the reader fails): an exception
     * naming the snapshot, the exit status and stderr's tail; btrfs is killed and waited for.
     */
    <T> T stream(Path snapshot, Optional<Path> parent, Function<InputStream, T> reader) {
        var argv = new ArrayList<>(List.of(btrfs.toString(), "send", "--quiet"));
        parent.ifPresent(p -> argv.addAll(List.of("-p", p.toString())));
        argv.add(snapshot.toString());
        Path log = logDir.resolve("send-" + snapshot.getFileName() + parent.map(p -> "-from-" + p.getFileName()).orElse("") + ".log");
        String step = "btrfs send " + snapshot + parent.map(p -> " -p " + p).orElse("");
        Process process = null;
        try {
            Files.createDirectories(logDir);
            process = new ProcessBuilder(argv).redirectError(log.toFile()).redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
                    .start();
            Process started = process;
            // The reader blocks on the pipe: a watchdog ends a btrfs that hangs, and the read then ends.
            var watchdog = Thread.ofVirtual().start(() -> {
                try {
                    if (!started.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) started.destroyForcibly();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            T result;
            try (InputStream out = process.getInputStream()) {
                result = reader.apply(out);
            }
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS))
                throw new IllegalStateException(step + " did not end within " + timeout + "; " + tail(log));
            watchdog.join();
            if (process.exitValue() != 0) throw new IllegalStateException(step + " exited " + process.exitValue() + ": " + tail(log));
            return result;
        } catch (IOException e) {
            throw new UncheckedIOException(step + " could not be run: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(step + " interrupted", e);
        } finally {
            if (process != null && process.isAlive()) {
                process.destroyForcibly();
                try {
                    process.waitFor(5, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /**
     * {@code btrfs subvolume sync}: waits until the subvolumes deleted on the filesystem holding
     * {@code anyPath} are cleaned up (their extents freed), at most the timeout.
     */
    void awaitDeletedSubvolumes(Path anyPath) {
        String step = "btrfs subvolume sync " + anyPath;
        try {
            var result = ToolRunner.run(List.of(btrfs.toString(), "subvolume", "sync", anyPath.toString()), timeout);
            if (result.exitCode() != 0) throw new IllegalStateException(step + " exited " + result.exitCode() + ": " + result.stderrTail());
        } catch (IOException e) {
            throw new UncheckedIOException(step + " could not be run: " + e.getMessage(), e);
        } catch (ToolRunner.TimedOut e) {
            throw new IllegalStateException(step + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(step + " interrupted", e);
        }
    }

    private static String tail(Path log) {
        try {
            var lines = Files.readAllLines(log);
            return "stderr: " + String.join(" | ", lines.subList(Math.max(0, lines.size() - ToolRunner.TAIL_LINES), lines.size()));
        } catch (IOException e) {
            return "stderr unreadable (" + log + "): " + e.getMessage();
        }
    }
}
