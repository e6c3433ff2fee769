package io.stasis.runtime.runc;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** The lines of a CRIU log that say why it failed, for error messages. */
final class CriuLog {
    /** Logged on every run here and harmless: CAP_SYS_RESOURCE is not in the bounding set (PLATFORM.md). */
    private static final String KNOWN_NOISE = "RLIMIT_NOFILE";

    private CriuLog() {
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
