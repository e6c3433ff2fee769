package io.stasis.bench;

import java.io.PrintStream;
import java.util.Locale;

/** Progress lines on stderr, each with the seconds since the run began; stdout keeps only the table. */
final class Progress {
    private final PrintStream out;
    private final long start = System.nanoTime();

    Progress(PrintStream out) {
        this.out = out;
    }

    static Progress toStderr() {
        return new Progress(System.err);
    }

    void say(String format, Object... args) {
        double seconds = (System.nanoTime() - start) / 1e9;
        out.printf(Locale.ROOT, "[bench %6.1fs] %s%n", seconds, String.format(Locale.ROOT, format, args));
        out.flush();
    }

    /** Reports iteration {@code done} of {@code total} about five times per series, not on every one. */
    void tick(String label, int done, int total) {
        int step = Math.max(1, total / 5);
        if (done == total || done % step == 0) say("%s: %d/%d", label, done, total);
    }
}
