package io.stasis.core.policy;

import io.stasis.core.error.StasisException;
import java.time.Duration;
import java.util.regex.Pattern;

/** Durations as the API writes them: {@code "500ms"}, {@code "15s"}, {@code "10m"}, {@code "2h"}, {@code "7d"}. */
public final class Durations {
    private static final Pattern SHAPE = Pattern.compile("(\\d{1,9})(ms|s|m|h|d)");

    private Durations() {
    }

    public static Duration parse(String field, String text) {
        var m = SHAPE.matcher(text == null ? "" : text.strip());
        if (!m.matches()) throw StasisException.invalid(field, "must be a duration such as \"15s\", \"10m\" or \"7d\" (or null), was '" + text + "'");
        long n = Long.parseLong(m.group(1));
        return switch (m.group(2)) {
            case "ms" -> Duration.ofMillis(n);
            case "s" -> Duration.ofSeconds(n);
            case "m" -> Duration.ofMinutes(n);
            case "h" -> Duration.ofHours(n);
            default -> Duration.ofDays(n);
        };
    }

    /** The shortest exact form: {@code 90s} stays {@code 90s}, {@code 600s} becomes {@code 10m}. */
    public static String format(Duration d) {
        long ms = d.toMillis();
        if (ms % 86_400_000 == 0) return ms / 86_400_000 + "d";
        if (ms % 3_600_000 == 0) return ms / 3_600_000 + "h";
        if (ms % 60_000 == 0) return ms / 60_000 + "m";
        if (ms % 1000 == 0) return ms / 1000 + "s";
        return ms + "ms";
    }
}
