package io.stasis.bench;

/**
 * Runs a series: uncounted warm-up iterations first, then the counted ones, each returning its
 * own sample (an iteration times only its measured part, so untimed setup and cleanup such as
 * deleting a sandbox stay out of the figure).
 */
final class Sampler {
    /** One iteration; returns its sample in the series' unit. */
    @FunctionalInterface
    interface Iteration {
        double measure(int index) throws Exception;
    }

    private final Progress progress;

    Sampler(Progress progress) {
        this.progress = progress;
    }

    double[] run(String label, int warmup, int n, Iteration iteration) throws Exception {
        progress.say("%s: %d warm-up + %d measured", label, warmup, n);
        for (int i = 0; i < warmup; i++) iteration.measure(-1 - i);
        double[] samples = new double[n];
        for (int i = 0; i < n; i++) {
            samples[i] = iteration.measure(i);
            progress.tick(label, i + 1, n);
        }
        Stats stats = Stats.of(samples);
        progress.say("%s: p50 %s p95 %s", label, Format.number(stats.p50()), Format.number(stats.p95()));
        return samples;
    }
}
