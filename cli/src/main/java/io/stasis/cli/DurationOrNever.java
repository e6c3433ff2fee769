package io.stasis.cli;

import java.time.Duration;
import picocli.CommandLine.ITypeConverter;

/**
 * An idle-policy option's value: a duration ({@code 30s}, {@code 10m}, {@code 7d}) or
 * {@code never}, which the API sends as null.
 *
 * @param duration the duration, or null for never
 */
record DurationOrNever(Duration duration) {
    static final DurationOrNever NEVER = new DurationOrNever(null);

    /** Picocli's converter: {@code never} (any case) or a {@link Durations} text. */
    static final class Converter implements ITypeConverter<DurationOrNever> {
        @Override
        public DurationOrNever convert(String value) {
            if (value != null && value.strip().equalsIgnoreCase("never")) return NEVER;
            return new DurationOrNever(Durations.parse(value));
        }
    }
}
