package io.stasis.launcher;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/** Runs a bash script with the launcher's libraries sourced, as ./stasis does, from the repository's root. */
final class Bash {
    /** The repository: this module's parent directory. */
    static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    record Result(int code, String out, String err) {
    }

    private Bash() {
    }

    /** Starts {@code script} after sourcing common.sh and build.sh (STASIS_ROOT is the repository). */
    static Process start(String script) throws IOException {
        String prelude = "set -euo pipefail\nSTASIS_ROOT=" + quote(ROOT.toString()) + "\n"
                + "source \"$STASIS_ROOT/scripts/lib/common.sh\"\nsource \"$STASIS_ROOT/scripts/lib/build.sh\"\n";
        return new ProcessBuilder("bash", "-c", prelude + script).directory(ROOT.toFile()).start();
    }

    static Result run(String script) throws IOException, InterruptedException {
        Process process = start(script);
        process.getOutputStream().close();
        var out = new ByteArrayOutputStream();
        var err = new ByteArrayOutputStream();
        var readErr = Thread.ofVirtual().start(() -> {
            try {
                process.getErrorStream().transferTo(err);
            } catch (IOException ignored) {
                // the process ended
            }
        });
        process.getInputStream().transferTo(out);
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("the script did not end within 60 s: " + script);
        }
        readErr.join();
        return new Result(process.exitValue(), out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    static String quote(String s) {
        return "'" + s.replace("'", "'\\''") + "'";
    }
}
