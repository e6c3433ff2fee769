package io.stasis.cli;

import java.io.PrintStream;
import java.time.Duration;

/**
 * A one-line progress indicator on stderr while a long call runs ({@code hibernating demo... 3s},
 * {@code building base 42%}, {@code copying app/data.csv (3 files, 2.1 MiB so far)}). Drawn only when stderr is a terminal and the output is not
 * {@code --json}, so that scripts, pipes and logs never see it; redrawn in place with a carriage
 * return and erased on {@link #close}, so that what the command prints next stands alone.
 */
final class Progress implements AutoCloseable {
    private static final Duration TICK = Duration.ofSeconds(1);

    private final PrintStream err; // null: silent
    private int width;
    private Thread ticker;

    private Progress(PrintStream err) {
        this.err = err;
    }

    /** A line that shows what {@link #show} is given, or nothing when the output is not for a person. */
    static Progress start(StasisCommand root) {
        return new Progress(root.json() || !root.io().errIsTerminal() ? null : root.io().err());
    }

    /** {@code text...}, then the seconds it has taken, once a second, until closed. */
    static Progress ticking(StasisCommand root, String text) {
        var progress = start(root);
        if (progress.err == null) return progress;
        progress.show(text + "...");
        long started = System.nanoTime();
        progress.ticker = Thread.ofVirtual().name("stasis-progress").start(() -> {
            try {
                while (true) {
                    Thread.sleep(TICK);
                    progress.show(text + "... " + Duration.ofNanos(System.nanoTime() - started).toSeconds() + "s");
                }
            } catch (InterruptedException e) {
                // Closed: the line is erased by close().
            }
        });
        return progress;
    }

    /** Replaces the line with {@code text}. */
    synchronized void show(String text) {
        if (err == null) return;
        err.print("\r" + text + " ".repeat(Math.max(0, width - text.length())));
        err.flush();
        width = text.length();
    }

    /** Stops the clock and erases the line. */
    @Override
    public void close() {
        if (ticker != null) {
            ticker.interrupt();
            try {
                ticker.join(TICK);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        erase();
    }

    /** Erases the line, e.g. before a warning; the next {@link #show} draws it again. */
    synchronized void erase() {
        if (err == null || width == 0) return;
        err.print("\r" + " ".repeat(width) + "\r");
        err.flush();
        width = 0;
    }
}
