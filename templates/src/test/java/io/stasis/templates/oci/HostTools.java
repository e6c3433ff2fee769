package io.stasis.templates.oci;

import io.stasis.host.ToolRunner;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** The tests' one way to run host tools (GNU tar, mkfifo, mknod, setcap): argv in, success or a failure naming the tool's stderr. */
final class HostTools {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private HostTools() {
    }

    static boolean installed(String tool) {
        return Files.isExecutable(ToolRunner.locate(tool));
    }

    /** Runs a tool and returns its stdout; fails the test when it exits non-zero. */
    static String run(String... argv) {
        try {
            var result = ToolRunner.run(List.of(argv), TIMEOUT);
            if (result.exitCode() != 0)
                throw new AssertionError(String.join(" ", argv) + " exited " + result.exitCode() + ": " + result.stderrText());
            return result.stdoutText();
        } catch (Exception e) {
            if (e instanceof RuntimeException r) throw r;
            throw new AssertionError("cannot run " + argv[0], e);
        }
    }

    /**
     * Archives the contents of {@code dir} ({@code ./...} members) with GNU tar into {@code archive}.
     *
     * @param format {@code gnu}, {@code pax} or {@code ustar}
     */
    static Path tar(Path dir, Path archive, String format, String... options) {
        var argv = new ArrayList<>(List.of("tar", "--create", "--file", archive.toString(), "--format=" + format, "--numeric-owner"));
        argv.addAll(List.of(options));
        argv.addAll(List.of("--directory", dir.toString(), "."));
        run(argv.toArray(String[]::new));
        return archive;
    }
}
