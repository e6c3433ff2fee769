package io.stasis.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Clients no one on this project wrote, from npm: node scripts with their {@code package.json} and
 * committed {@code package-lock.json}, their packages installed into their directory once
 * ({@code npm ci}), run with node.
 */
public final class NodeScripts {
    private static final Duration INSTALL_TIMEOUT = Duration.ofMinutes(5);

    private NodeScripts() {
    }

    /** What a command printed (stdout and stderr together) and its exit code (-1: it timed out). */
    public record Run(int code, String output) {
    }

    /** Whether node and npm are installed. */
    public static boolean available() {
        return works("node", "--version") && works("npm", "--version");
    }

    /** Installs the packages of the script in {@code dir} from its lockfile, unless they are there. */
    public static void install(Path dir) throws IOException, InterruptedException {
        if (Files.isDirectory(dir.resolve("node_modules"))) return;
        var npm = run(dir, Map.of(), INSTALL_TIMEOUT, "npm", "ci", "--no-audit", "--no-fund");
        if (npm.code() != 0) throw new IllegalStateException("npm ci in " + dir + " failed: " + npm.output());
    }

    /** Runs {@code argv} in {@code dir} with {@code env} added to this process's environment; killed after {@code timeout}. */
    public static Run run(Path dir, Map<String, String> env, Duration timeout, String... argv) throws IOException, InterruptedException {
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

    private static boolean works(String... argv) {
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
