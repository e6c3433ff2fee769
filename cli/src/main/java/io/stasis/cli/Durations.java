package io.stasis.cli;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** Parses {@code 500ms}, {@code 30s}, {@code 1.5s}, {@code 2m}, {@code 1h}, {@code 7d}; a bare number is seconds. */
final class Durations implements ITypeConverter<Duration> {
    private static final Pattern FORMAT = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ms|s|m|h|d)?");

    @Override
    public Duration convert(String value) {
        return parse(value);
    }

    static Duration parse(String text) {
        Matcher m = FORMAT.matcher(text == null ? "" : text.strip());
        if (!m.matches()) {
            throw new TypeConversionException("'" + text + "' is not a duration: use e.g. 500ms, 30s, 2m, 1h or 7d");
        }
        BigDecimal amount = new BigDecimal(m.group(1));
        String unit = m.group(2) == null ? "s" : m.group(2);
        BigDecimal millis = amount.multiply(BigDecimal.valueOf(switch (unit) {
            case "ms" -> 1L;
            case "s" -> 1_000L;
            case "m" -> 60_000L;
            case "h" -> 3_600_000L;
            default -> 86_400_000L;
        }));
        if (millis.signum() == 0) throw new TypeConversionException("a duration must be positive, was '" + text + "'");
        if (millis.stripTrailingZeros().scale() > 0) {
            throw new TypeConversionException("'" + text + "' is finer than a millisecond");
        }
        return Duration.ofMillis(millis.longValueExact());
    }
}
