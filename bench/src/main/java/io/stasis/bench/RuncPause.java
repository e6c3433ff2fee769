package io.stasis.bench;

import io.stasis.core.sandbox.SandboxId;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code runc pause} and {@code runc resume} of a floor container, for comparison with the
 * service's own freeze (a write to the cgroup's freezer file). The service's {@code Runc} has no
 * such verbs because the service never runs them; this is the benchmark's only other class that
 * starts runc, and only for these two.
 */
final class RuncPause {
    private static final File DEV_NULL = new File("/dev/null");

    private final Path binary;
    private final Path stateRoot;
    private final Path logDir;
    private final Duration timeout;

    RuncPause(Path binary, Path stateRoot, Path logDir, Duration timeout) {
        this.binary = binary;
        this.stateRoot = stateRoot;
        this.logDir = logDir;
        this.timeout = timeout;
    }

    void pause(SandboxId id) {
        run(id, "pause");
    }

    void resume(SandboxId id) {
        run(id, "resume");
    }

    private void run(SandboxId id, String verb) {
        Path output;
        Process process = null;
        try {
            Path dir = logDir.resolve(id.value());
            // Checked first: createDirectories of an existing directory throws (and catches) inside the timed call.
            if (!Files.isDirectory(dir)) Files.createDirectories(dir);
            output = dir.resolve("runc-" + verb + ".out");
            process = new ProcessBuilder(List.of(binary.toString(), "--root", stateRoot.toString(), verb, id.value()))
                    .redirectInput(DEV_NULL).redirectErrorStream(true).redirectOutput(output.toFile()).start();
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS))
                throw new IllegalStateException("runc " + verb + " " + id + " timed out after " + timeout.toMillis() + " ms");
            if (process.exitValue() != 0)
                throw new IllegalStateException("runc " + verb + " " + id + " exited with " + process.exitValue() + ": "
                        + Files.readString(output).strip());
        } catch (IOException e) {
            throw new IllegalStateException("runc " + verb + " " + id + " could not run: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("runc " + verb + " " + id + " interrupted", e);
        } finally {
            if (process != null && process.isAlive()) process.destroyForcibly(); // never leak a runc
        }
    }
}
