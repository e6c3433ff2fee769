package io.stasis.catalog.sql;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.time.format.ResolverStyle;

/**
 * How the catalog writes instants: fixed-width ISO-8601 UTC text with all nine fraction digits,
 * e.g. {@code 2026-01-02T03:04:05.000000000Z}. Fixed width makes text order equal time order (so
 * SQL can sort and compare the column), the nanoseconds keep every {@link Instant} exact, and the
 * text stays readable in the sqlite3 shell.
 */
final class CatalogTime {
    private static final DateTimeFormatter FORMAT = DateTimeFormatter
            .ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSSSSS'Z'")
            .withZone(ZoneOffset.UTC)
            .withResolverStyle(ResolverStyle.STRICT);
    // Years outside 0000..9999 would print with a sign or a fifth digit and break the text order.
    private static final Instant MIN = Instant.parse("0000-01-01T00:00:00Z");
    private static final Instant MAX = Instant.parse("9999-12-31T23:59:59.999999999Z");

    private CatalogTime() {
    }

    static String format(Instant instant) {
        if (instant.isBefore(MIN) || instant.isAfter(MAX))
            throw new IllegalArgumentException("the catalog stores instants in years 0000-9999 only, was " + instant);
        return FORMAT.format(instant);
    }

    /** Parses text written by {@link #format}; anything else is a {@link DateTimeParseException}. */
    static Instant parse(String text) {
        return FORMAT.parse(text, Instant::from);
    }
}
