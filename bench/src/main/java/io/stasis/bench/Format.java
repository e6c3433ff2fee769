package io.stasis.bench;

import java.util.Locale;

/** Numbers as the table and the progress lines show them. */
final class Format {
    private Format() {
    }

    /** Three significant digits at most, no exponent: 0.412, 4.12, 41.2, 412, 4120. */
    static String number(double value) {
        double abs = Math.abs(value);
        if (abs >= 100 || value == Math.rint(value) && abs < 1e15) return String.format(Locale.ROOT, "%.0f", value);
        if (abs >= 10) return String.format(Locale.ROOT, "%.1f", value);
        if (abs >= 1) return String.format(Locale.ROOT, "%.2f", value);
        return String.format(Locale.ROOT, "%.3f", value);
    }

    static double millis(long nanos) {
        return nanos / 1e6;
    }
}
