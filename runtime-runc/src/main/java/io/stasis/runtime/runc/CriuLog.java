package io.stasis.runtime.runc;

import io.stasis.core.error.StasisException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/** The lines of a CRIU log that say why it failed, for error messages. */
final class CriuLog {
    /** Logged on every run here and harmless: CAP_SYS_RESOURCE is not in the bounding set (docs/HOST.md). */
    private static final String KNOWN_NOISE = "RLIMIT_NOFILE";

    private CriuLog() {
    }

    /**
     * Why CRIU refused the sandbox's state, when that is a known limit rather than a fault: its
     * tty check wants the foreground process group of a terminal whose program opened /dev/tty
     * (job-control shells such as busybox ash and dash do) to be the session's own; and file locks
     * ({@code flock}, {@code fcntl}), which CRIU is not asked to dump.
     */
    static Optional<String> unsupportedState(Path log) {
        try {
            if (!Files.exists(log)) return Optional.empty();
            String text = Files.readString(log);
            if (text.contains("ctty inheritance detected"))
                return Optional.of("a terminal's shell holds /dev/tty open while a foreground job runs (ash and dash do this; "
                        + "bash does not): wait for the job to end or run it in the background, then try again");
            if (text.contains("Some file locks are hold"))
                return Optional.of("a process holds a file lock (flock or fcntl, on a volume or in the root): "
                        + "release it, then try again");
        } catch (IOException | RuntimeException e) {
            // the generic failure stands
        }
        return Optional.empty();
    }

    /** The line of a CRIU log that says it could not write for want of room (ENOSPC, EDQUOT), if there is one. */
    static Optional<String> diskFull(Path log) {
        try {
            if (!Files.exists(log)) return Optional.empty();
            return Files.readAllLines(log).stream().filter(l -> l.contains("No space left on device") || l.contains("Disk quota exceeded"))
                    .map(l -> l.replaceFirst("^\\([0-9.]+\\)\\s*", "")).findFirst();
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** Whether the dump this log is of ran to its end (CRIU's last words on success). */
    static boolean dumpFinished(Path log) {
        try {
            if (!Files.exists(log)) return false;
            var lines = Files.readAllLines(log);
            for (int i = lines.size() - 1; i >= Math.max(0, lines.size() - 5); i--)
                if (lines.get(i).endsWith("Dumping finished successfully")) return true;
            return false;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /** {@code e} with the errors of the CRIU log {@code log} added to its message, where it is a Stasis error and the log has some. */
    static RuntimeException withErrors(RuntimeException e, Path log) {
        String errors = errors(log);
        if (errors.isEmpty() || !(e instanceof StasisException s)) return e;
        return new StasisException(s.code(), s.getMessage() + errors, s.details(), s);
    }

    static String errors(Path log) {
        try {
            if (!Files.exists(log)) return "";
            List<String> errors = Files.readAllLines(log).stream()
                    .filter(l -> l.contains("Error") && !l.contains(KNOWN_NOISE))
                    .toList();
            if (errors.isEmpty()) return "";
            return "; criu (" + log.getFileName() + "): " + String.join(" | ", errors.subList(Math.max(0, errors.size() - 5), errors.size()));
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }
}
