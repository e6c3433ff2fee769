package io.stasis.bench;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The only class of the benchmark that runs {@code runc}: the raw floor under a sandbox, with the
 * benchmark's own state directory ({@code --root}) so it never touches the service's containers.
 * Flags mirror the service's (a JSON log file per step), so the floor pays what the service pays.
 */
final class Runc {
    private static final File DEV_NULL = new File("/dev/null");

    private final Path binary;
    private final Path stateRoot;
    private final Path logDir;
    private final Duration timeout;

    Runc(Path binary, Path stateRoot, Path logDir, Duration timeout) {
        this.binary = binary;
        this.stateRoot = stateRoot;
        this.logDir = logDir;
        this.timeout = timeout;
    }

    /** {@code runc run --detach}: returns once the container's process 1 runs. Stdio is /dev/null. */
    void runDetached(String id, Path bundle) {
        run(id, "run", "run", "--detach", "--bundle", bundle.toString(), id);
    }

    /** {@code runc exec} in the foreground: returns when the command has ended; fails unless it exits 0. */
    void exec(String id, String... argv) {
        var args = new ArrayList<>(List.of("exec", id));
        args.addAll(List.of(argv));
        run(id, "exec", args.toArray(String[]::new));
    }

    void deleteForce(String id) {
        run(id, "delete", "delete", "--force", id);
    }

    /** Whether runc still has state for this container. */
    boolean knows(String id) {
        return Files.isDirectory(stateRoot.resolve(id));
    }

    String version() {
        return run(null, "version", "--version").lines().findFirst().orElse("?");
    }

    private String run(String id, String step, String... args) {
        Path log = logDir.resolve((id == null ? "runc" : id) + "-" + step + ".log");
        var argv = new ArrayList<>(List.of(binary.toString(), "--root", stateRoot.toString(), "--log", log.toString(),
                "--log-format", "json"));
        argv.addAll(List.of(args));
        boolean detached = step.equals("run") || step.equals("exec");
        Process process = null;
        try {
            Files.createDirectories(logDir);
            // A detached container inherits runc's stdio: pipes to this JVM would tie it to us.
            var builder = new ProcessBuilder(argv).redirectInput(DEV_NULL);
            if (detached) builder.redirectOutput(DEV_NULL).redirectError(DEV_NULL);
            else builder.redirectErrorStream(true);
            process = builder.start();
            var output = detached ? CompletableFuture.completedFuture("") : drain(process.getInputStream());
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS))
                throw new ToolException("runc " + step + (id == null ? "" : " " + id) + " timed out after " + timeout + tail(log));
            if (process.exitValue() != 0)
                throw new ToolException("runc " + step + (id == null ? "" : " " + id) + " exited with " + process.exitValue()
                        + ": " + output.join().strip() + tail(log));
            return output.join();
        } catch (IOException e) {
            throw new ToolException("could not run " + binary + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ToolException("interrupted while running runc " + step, e);
        } finally {
            if (process != null && process.isAlive()) process.destroyForcibly(); // never leave a runc behind
        }
    }

    private static CompletableFuture<String> drain(InputStream in) {
        var result = new CompletableFuture<String>();
        // A virtual thread reads the pipe: a full pipe would block the tool before it exits.
        Thread.ofVirtual().start(() -> {
            try (in) {
                result.complete(new String(in.readAllBytes(), StandardCharsets.UTF_8));
            } catch (IOException e) {
                result.complete("(output unreadable: " + e.getMessage() + ")");
            }
        });
        return result;
    }

    /** runc's last log line, which carries its own reason for a failure. */
    private static String tail(Path log) {
        try {
            if (!Files.exists(log)) return "";
            var lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            return lines.isEmpty() ? "" : "; runc log: " + lines.getLast();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
