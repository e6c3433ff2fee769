package io.stasis.bench;

import java.util.Locale;

/**
 * A goal the issue sets for a figure, judged on one percentile of it (the median unless the issue
 * names a tail).
 *
 * @param comparison whether the percentile must stay at or under, or reach at least, {@code value}
 * @param value      the goal, in the figure's unit
 * @param percentile 50, 90, 95 or 99
 */
public record Target(Comparison comparison, double value, int percentile) {
    public enum Comparison {
        AT_MOST("<="), AT_LEAST(">=");

        private final String symbol;

        Comparison(String symbol) {
            this.symbol = symbol;
        }

        public String symbol() {
            return symbol;
        }
    }

    public Target {
        if (percentile != 50 && percentile != 90 && percentile != 95 && percentile != 99)
            throw new IllegalArgumentException("no such percentile in Stats: " + percentile);
    }

    public static Target atMost(double value) {
        return new Target(Comparison.AT_MOST, value, 50);
    }

    public static Target atLeast(double value) {
        return new Target(Comparison.AT_LEAST, value, 50);
    }

    /** The slowest 1% at or under {@code value}. */
    public static Target p99AtMost(double value) {
        return new Target(Comparison.AT_MOST, value, 99);
    }

    public boolean metBy(Stats stats) {
        double judged = judged(stats);
        return switch (comparison) {
            case AT_MOST -> judged <= value;
            case AT_LEAST -> judged >= value;
        };
    }

    private double judged(Stats stats) {
        return switch (percentile) {
            case 90 -> stats.p90();
            case 95 -> stats.p95();
            case 99 -> stats.p99();
            default -> stats.p50();
        };
    }

    /** The JSON key of the judged percentile, e.g. {@code p50}. */
    public String key() {
        return "p" + percentile;
    }

    /** e.g. {@code p50 <= 50}. */
    public String describe() {
        return key() + " " + comparison.symbol() + " " + Format.number(value);
    }

    @Override
    public String toString() {
        return describe().toLowerCase(Locale.ROOT);
    }
}
