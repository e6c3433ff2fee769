package io.stasis.runtime.runc;

import io.stasis.host.ToolRunner;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * CRIU's release, as its {@code --version} prints it, read once when the runtime starts: runc asks
 * CRIU for it before every dump and restore, and {@code stasis-criu} answers from it instead of
 * starting CRIU for that alone. A build from git (a {@code GitID} line) is left unanswered: runc
 * counts its version differently.
 */
record CriuVersion(int major, int minor, int sublevel) {
    private static final Pattern RELEASE = Pattern.compile("(?m)^Version: (\\d{1,4})\\.(\\d{1,4})(?:\\.(\\d{1,4}))?$");

    /** What {@code stasis-criu} reads in STASIS_CRIU_VERSION. */
    String wire() {
        return major + "." + minor + "." + sublevel;
    }

    static Optional<CriuVersion> parse(String versionOutput) {
        if (versionOutput.contains("GitID")) return Optional.empty();
        var match = RELEASE.matcher(versionOutput);
        if (!match.find()) return Optional.empty();
        return Optional.of(new CriuVersion(Integer.parseInt(match.group(1)), Integer.parseInt(match.group(2)),
                match.group(3) == null ? 0 : Integer.parseInt(match.group(3))));
    }

    /** Asks the binary; empty when it cannot tell (then every call starts CRIU, as without the helper). */
    static Optional<CriuVersion> of(Path criu, Duration timeout) {
        try {
            var result = ToolRunner.run(List.of(criu.toString(), "--version"), timeout);
            return result.exitCode() == 0 ? parse(result.stdoutText()) : Optional.empty();
        } catch (IOException | ToolRunner.TimedOut e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }
}
