package io.stasis.sdk;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations as the API writes them: {@code "500ms"}, {@code "15s"}, {@code "10m"}, {@code "2h"},
 * {@code "7d"}: a whole number of at most 9 digits and one unit.
 */
final class ApiDurations {
    private static final Pattern SHAPE = Pattern.compile("(\\d{1,9})(ms|s|m|h|d)");
    private static final long MAX_AMOUNT = 999_999_999L;

    private ApiDurations() {
    }

    /** Parses a wire duration. @throws IllegalArgumentException when it is not one */
    static Duration parse(String text) {
        Matcher m = SHAPE.matcher(text == null ? "" : text.strip());
        if (!m.matches()) {
            throw new IllegalArgumentException("not an API duration such as \"15s\", \"10m\" or \"7d\": '" + text + "'");
        }
        long n = Long.parseLong(m.group(1));
        return switch (m.group(2)) {
            case "ms" -> Duration.ofMillis(n);
            case "s" -> Duration.ofSeconds(n);
            case "m" -> Duration.ofMinutes(n);
            case "h" -> Duration.ofHours(n);
            default -> Duration.ofDays(n);
        };
    }

    /**
     * The shortest exact wire form ({@code 600s} is sent as {@code 10m}, as the server writes it).
     *
     * @throws IllegalArgumentException for a duration the API cannot express: zero or negative,
     *                                  finer than a millisecond, or too long for 9 digits
     */
    static String format(Duration d) {
        if (d.isNegative() || d.isZero()) throw new IllegalArgumentException("a duration must be positive, was " + d);
        if (d.getNano() % 1_000_000 != 0) throw new IllegalArgumentException("the API counts whole milliseconds, was " + d);
        if (d.compareTo(Duration.ofDays(MAX_AMOUNT)) > 0) {
            throw new IllegalArgumentException("too long for the API (at most 9 digits per unit): " + d);
        }
        long ms = d.toMillis();
        String text;
        long amount;
        if (ms % 86_400_000 == 0) {
            amount = ms / 86_400_000;
            text = amount + "d";
        } else if (ms % 3_600_000 == 0) {
            amount = ms / 3_600_000;
            text = amount + "h";
        } else if (ms % 60_000 == 0) {
            amount = ms / 60_000;
            text = amount + "m";
        } else if (ms % 1000 == 0) {
            amount = ms / 1000;
            text = amount + "s";
        } else {
            amount = ms;
            text = ms + "ms";
        }
        if (amount > MAX_AMOUNT) throw new IllegalArgumentException("too long for the API (at most 9 digits per unit): " + d);
        return text;
    }
}
