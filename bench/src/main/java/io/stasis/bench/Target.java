package io.stasis.bench;

import java.util.Locale;

/**
 * A goal the issue sets for a figure, judged on its median.
 *
 * @param comparison whether the median must stay at or under, or reach at least, {@code value}
 * @param value      the goal, in the figure's unit
 */
public record Target(Comparison comparison, double value) {
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

    public static Target atMost(double value) {
        return new Target(Comparison.AT_MOST, value);
    }

    public static Target atLeast(double value) {
        return new Target(Comparison.AT_LEAST, value);
    }

    public boolean metBy(Stats stats) {
        return switch (comparison) {
            case AT_MOST -> stats.p50() <= value;
            case AT_LEAST -> stats.p50() >= value;
        };
    }

    /** e.g. {@code p50 <= 50}. */
    public String describe() {
        return "p50 " + comparison.symbol() + " " + Format.number(value);
    }

    @Override
    public String toString() {
        return describe().toLowerCase(Locale.ROOT);
    }
}
