package io.stasis.server;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.stasis.testkit.NodeScripts.Run;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Map;

/**
 * A client session under {@code src/test/ts/<name>} (its {@code package.json}, committed
 * {@code package-lock.json} and {@code session.mjs}) copied to {@code target/<name>}, its
 * packages installed there once, and run with node (see {@link io.stasis.testkit.NodeScripts}).
 */
final class NodeScripts {
    private NodeScripts() {
    }

    /** Runs {@code session.mjs} of the script {@code name} with {@code env}; skipped where node and npm are missing. */
    static Run runSession(String name, Map<String, String> env, Duration timeout) throws IOException, InterruptedException {
        assumeTrue(io.stasis.testkit.NodeScripts.available(), "node and npm are needed");
        Path script = Path.of("src/test/ts", name).toAbsolutePath();
        Path work = Path.of("target", name).toAbsolutePath();
        Files.createDirectories(work);
        for (String file : new String[] {"package.json", "package-lock.json", "session.mjs"})
            Files.copy(script.resolve(file), work.resolve(file), StandardCopyOption.REPLACE_EXISTING);
        io.stasis.testkit.NodeScripts.install(work);
        return io.stasis.testkit.NodeScripts.run(work, env, timeout, "node", "session.mjs");
    }
}
