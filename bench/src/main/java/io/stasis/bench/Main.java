package io.stasis.bench;

import io.stasis.server.http.NodeForwarder;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * {@code ./stasis bench [flags]}: runs the benchmark, prints the table on stdout and writes the
 * JSON. Exit status 0 on a clean run, 1 if a scenario or the teardown failed, 2 on a bad command line.
 */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) {
        NodeForwarder.allowPassingTheHost(); // as the service's own main: its private services pass calls on between nodes
        // The benchmark's own logging setup (warnings only), not the service's INFO lines per request.
        if (System.getProperty("logback.configurationFile") == null)
            System.setProperty("logback.configurationFile", "stasis-bench-logback.xml");
        Options options;
        try {
            options = Options.parse(args);
        } catch (Options.UsageException e) {
            System.err.println("error: " + e.getMessage());
            System.err.print(Options.usage());
            System.exit(2);
            return;
        }
        if (options.help()) {
            System.out.print(Options.usage());
            return;
        }
        if (!isRoot()) {
            System.err.println("error: the benchmark starts a Stasis service, which needs root (sudo ./stasis bench)");
            System.exit(2);
            return;
        }
        if (options.json().equals(Options.DEFAULT_JSON)) options = options.withJson(defaultJson());
        Report report = Benchmark.run(options);
        System.out.print(ResultTable.render(report));
        System.out.flush();
        try {
            ResultJson.write(report, options.json());
            System.err.println("JSON written to " + options.json().toAbsolutePath());
        } catch (IOException e) {
            System.err.println("error: could not write " + options.json() + ": " + e.getMessage());
            System.exit(1);
        }
        System.exit(report.failed() ? 1 : 0);
    }

    /**
     * {@code bench-results.json} next to the jar ({@code bench/target/}), wherever the command is
     * run from; relative to the working directory when not run from a jar.
     */
    private static Path defaultJson() {
        try {
            Path code = Path.of(Main.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            if (Files.isRegularFile(code) && code.getParent() != null) return code.getParent().resolve("bench-results.json");
        } catch (URISyntaxException | SecurityException | NullPointerException e) {
            // Fall through to the documented relative default.
        }
        return Options.DEFAULT_JSON;
    }

    private static boolean isRoot() {
        try {
            return Files.readAllLines(Path.of("/proc/self/status")).stream()
                    .filter(l -> l.startsWith("Uid:")).anyMatch(l -> l.split("\\s+")[2].equals("0"));
        } catch (IOException e) {
            return false;
        }
    }
}
