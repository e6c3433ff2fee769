package io.stasis.bench;

import java.util.Arrays;

/**
 * Summary of one series of samples. Percentiles are <b>nearest-rank</b>: the p-th percentile of n
 * sorted samples is the sample at rank {@code ceil(p/100 * n)} (1-based), so it is always a value
 * that was actually measured; with n = 1 every percentile is that sample.
 *
 * @param n   number of samples (warm-up excluded)
 * @param p50 median (nearest-rank)
 * @param p90 90th percentile (nearest-rank)
 * @param p95 95th percentile (nearest-rank)
 * @param p99 99th percentile (nearest-rank)
 * @param min smallest sample
 * @param max largest sample
 */
public record Stats(int n, double p50, double p90, double p95, double p99, double min, double max) {
    public static final String PERCENTILE_METHOD = "nearest-rank: the p-th percentile of n sorted samples is the sample at 1-based rank ceil(p/100*n)";

    public Stats {
        if (n < 1) throw new IllegalArgumentException("no samples");
    }

    public static Stats of(double... samples) {
        if (samples.length == 0) throw new IllegalArgumentException("no samples");
        double[] sorted = samples.clone();
        Arrays.sort(sorted);
        return new Stats(sorted.length, percentile(sorted, 50), percentile(sorted, 90), percentile(sorted, 95), percentile(sorted, 99),
                sorted[0], sorted[sorted.length - 1]);
    }

    /** A single derived value (e.g. memory per sandbox): every percentile is that value. */
    public static Stats single(double value) {
        return new Stats(1, value, value, value, value, value, value);
    }

    /** Nearest-rank percentile of already sorted samples. */
    static double percentile(double[] sorted, int p) {
        if (p <= 0 || p > 100) throw new IllegalArgumentException("percentile must be in (0, 100], was " + p);
        // Integer ceiling: floating point would turn 0.95 * 20 into 19.000000000000004 and rank 20.
        long rank = ((long) p * sorted.length + 99) / 100;
        return sorted[(int) rank - 1];
    }
}
