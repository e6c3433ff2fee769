package io.stasis.cli;

import io.stasis.sdk.LifecyclePolicy;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/** Sizes, numbers and times as people read them in tables. */
final class HumanFormat {
    private static final Pattern PLAIN_WORD = Pattern.compile("[A-Za-z0-9_./:=@%+,-]+");
    private static final String[] UNITS = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};

    private HumanFormat() {
    }

    /** {@code 512 B}, {@code 2.1 MiB}, {@code 15 GiB}: one decimal below 10 units. */
    static String size(Long bytes) {
        if (bytes == null) return null;
        if (bytes < 1024) return bytes + " B";
        double value = bytes;
        int unit = 0;
        while (value >= 1024 && unit < UNITS.length - 1) {
            value /= 1024;
            unit++;
        }
        if (value >= 9.95) return String.format(Locale.ROOT, "%.0f %s", value, UNITS[unit]);
        return String.format(Locale.ROOT, "%.1f %s", value, UNITS[unit]);
    }

    /** {@code 1}, {@code 0.5}: no trailing zeros. */
    static String number(Double value) {
        if (value == null) return null;
        return BigDecimal.valueOf(value).stripTrailingZeros().toPlainString();
    }

    /**
     * A policy duration as the API writes it, in its largest exact unit ({@code 15s}, {@code 10m},
     * {@code 30d}, {@code 1500ms}); null is {@code never}.
     */
    /** {@code 7d} (it deletes), {@code 5m, then standby, wake for 5m}, {@code never}. */
    static String maxAge(LifecyclePolicy p) {
        String age = duration(p.maxAge());
        if (p.maxAge() == null || p.atMaxAge() == null || p.atMaxAge().equals("delete")) return age;
        return age + ", then " + p.atMaxAge() + ", wake for " + duration(p.wakeFor());
    }

    static String duration(Duration d) {
        if (d == null) return "never";
        long ms = d.toMillis();
        if (ms != 0 && ms % 86_400_000 == 0) return ms / 86_400_000 + "d";
        if (ms != 0 && ms % 3_600_000 == 0) return ms / 3_600_000 + "h";
        if (ms != 0 && ms % 60_000 == 0) return ms / 60_000 + "m";
        if (ms % 1000 == 0) return ms / 1000 + "s";
        return ms + "ms";
    }

    /**
     * A command line as a shell would take it back: arguments with spaces, quotes or other
     * shell characters in single quotes ({@code sh -c 'echo hi'}).
     */
    static String command(List<String> argv) {
        return argv.stream().map(HumanFormat::shellWord).collect(Collectors.joining(" "));
    }

    private static String shellWord(String arg) {
        if (!arg.isEmpty() && PLAIN_WORD.matcher(arg).matches()) return arg;
        return "'" + arg.replace("'", "'\\''") + "'";
    }

    /** RFC 3339 to the second, e.g. {@code 2026-11-29T10:00:00Z}. */
    static String time(Instant instant) {
        return instant == null ? null : instant.truncatedTo(ChronoUnit.SECONDS).toString();
    }
}
