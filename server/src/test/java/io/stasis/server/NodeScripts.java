package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Clients no one on this project wrote, from npm: a script under {@code src/test/ts/<name>} (its
 * {@code package.json}, committed {@code package-lock.json} and {@code session.mjs}) copied to
 * {@code target/<name>}, its packages installed there once ({@code npm ci}), and run with node.
 */
final class NodeScripts {
    private NodeScripts() {
    }

    /** What a command printed (stdout and stderr together) and its exit code (-1: it timed out). */
    record Run(int code, String output) {
    }

    /** Runs {@code session.mjs} of the script {@code name} with {@code env}; skipped where node and npm are missing. */
    static Run runSession(String name, Map<String, String> env, Duration timeout) throws IOException, InterruptedException {
        assumeTrue(commandWorks("node", "--version") && commandWorks("npm", "--version"), "node and npm are needed");
        Path script = Path.of("src/test/ts", name).toAbsolutePath();
        Path work = Path.of("target", name).toAbsolutePath();
        Files.createDirectories(work);
        for (String file : new String[] {"package.json", "package-lock.json", "session.mjs"})
            Files.copy(script.resolve(file), work.resolve(file), StandardCopyOption.REPLACE_EXISTING);
        if (!Files.isDirectory(work.resolve("node_modules"))) {
            var npm = run(work, Map.of(), Duration.ofMinutes(5), "npm", "ci", "--no-audit", "--no-fund");
            assertThat(npm.code()).as(npm.output()).isZero();
        }
        return run(work, env, timeout, "node", "session.mjs");
    }

    private static Run run(Path dir, Map<String, String> env, Duration timeout, String... argv) throws IOException, InterruptedException {
        var builder = new ProcessBuilder(argv).directory(dir.toFile()).redirectErrorStream(true);
        builder.environment().putAll(env);
        Process process = builder.start();
        try {
            var output = new StringBuilder();
            Thread reader = Thread.ofVirtual().start(() -> {
                try {
                    output.append(new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
                } catch (IOException e) {
                    output.append("[output unreadable: ").append(e.getMessage()).append(']');
                }
            });
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS))
                return new Run(-1, "timed out after " + timeout + ": " + String.join(" ", argv));
            reader.join(Duration.ofSeconds(10));
            return new Run(process.exitValue(), output.toString());
        } finally {
            if (process.isAlive()) process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static boolean commandWorks(String... argv) {
        try {
            return run(Path.of("."), Map.of(), Duration.ofSeconds(30), argv).code() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
