package io.stasis.bench;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The only class of the benchmark that runs the {@code btrfs} CLI: the raw floor of a sandbox's
 * root (the service itself snapshots through an ioctl).
 */
final class Btrfs {
    private final Path binary;
    private final Duration timeout;

    Btrfs(Path binary, Duration timeout) {
        this.binary = binary;
        this.timeout = timeout;
    }

    static Btrfs onPath() {
        return new Btrfs(Path.of("btrfs"), Duration.ofSeconds(60));
    }

    /** A writable snapshot of {@code source} (which may be read-only) at {@code target}. */
    void snapshot(Path source, Path target) {
        run("subvolume", "snapshot", source.toString(), target.toString());
    }

    void deleteSubvolume(Path subvolume) {
        run("subvolume", "delete", subvolume.toString());
    }

    String version() {
        return run("--version").strip();
    }

    private String run(String... args) {
        var argv = new ArrayList<>(List.of(binary.toString()));
        argv.addAll(List.of(args));
        Process process = null;
        try {
            process = new ProcessBuilder(argv).redirectErrorStream(true).start();
            var output = drain(process.getInputStream());
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS))
                throw new ToolException(String.join(" ", argv) + " timed out after " + timeout);
            if (process.exitValue() != 0)
                throw new ToolException(String.join(" ", argv) + " exited with " + process.exitValue() + ": " + output.join().strip());
            return output.join();
        } catch (IOException e) {
            throw new ToolException("could not run " + binary + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ToolException("interrupted while running " + String.join(" ", argv), e);
        } finally {
            if (process != null && process.isAlive()) process.destroyForcibly();
        }
    }

    private static CompletableFuture<String> drain(InputStream in) {
        var result = new CompletableFuture<String>();
        Thread.ofVirtual().start(() -> {
            try (in) {
                result.complete(new String(in.readAllBytes(), StandardCharsets.UTF_8));
            } catch (IOException e) {
                result.complete("(output unreadable: " + e.getMessage() + ")");
            }
        });
        return result;
    }
}
