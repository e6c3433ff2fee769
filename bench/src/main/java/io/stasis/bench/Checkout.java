package io.stasis.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The repository the benchmark runs from (its jar is {@code bench/target/stasis-bench.jar} of it):
 * the scenarios that time whole processes run its launcher, CLI client and server jar.
 */
record Checkout(Path root) {
    /** The checkout of the running jar, if it is one (not when run from classes, as in tests). */
    static Optional<Checkout> ofRunningJar() {
        try {
            Path code = Path.of(Checkout.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            if (!Files.isRegularFile(code)) return Optional.empty();
            Path root = code.toAbsolutePath().getParent().getParent().getParent();
            return Files.isExecutable(root.resolve("stasis")) ? Optional.of(new Checkout(root)) : Optional.empty();
        } catch (Exception e) {
            return Optional.empty();
        }
    }

    Path launcher() {
        return root.resolve("stasis");
    }

    Path cliClient() {
        return root.resolve("cli/target/stasis-client");
    }

    Path serverJar() {
        return root.resolve("server/target/stasis-server.jar");
    }

    /** The server's ahead-of-time cache that {@code ./stasis up} made, when it is newer than the jar (else the JVM ignores it). */
    Optional<Path> serverAotCache() {
        Path cache = root.resolve(".build/aot/server.aot");
        try {
            return Files.isRegularFile(cache) && Files.getLastModifiedTime(cache).compareTo(Files.getLastModifiedTime(serverJar())) > 0
                    ? Optional.of(cache) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** The CLI daemon's socket of this user, where the launcher puts it. */
    Path cliDaemonSocket() {
        return root.resolve(".build/cli-daemon-" + uid() + "/cli.sock");
    }

    private static long uid() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status")))
                if (line.startsWith("Uid:")) return Long.parseLong(line.split("\\s+")[1]);
        } catch (Exception e) {
            // fall through
        }
        return 0;
    }
}
