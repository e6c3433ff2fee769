package io.stasis.core.template;

import java.time.Duration;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.event.Level;

/**
 * The log of one template build's progress: a line at INFO at most every {@code interval} (and
 * the first one), every other line at DEBUG. A Debian bootstrap reports each of its hundreds of
 * packages twice; the service's log keeps a line every few seconds of it.
 */
final class ProgressLog {
    private final Logger log;
    private final String template;
    private final long intervalNanos;
    private final LongSupplier nanoTime;
    private long lastInfo;
    private boolean any;

    ProgressLog(Logger log, String template, Duration interval, LongSupplier nanoTime) {
        this.log = log;
        this.template = template;
        this.intervalNanos = interval.toNanos();
        this.nanoTime = nanoTime;
    }

    /** Logs one progress report; returns the level it was logged at. */
    synchronized Level report(double fraction, String message) {
        long now = nanoTime.getAsLong();
        Level level = Level.DEBUG;
        if (!any || now - lastInfo >= intervalNanos) {
            level = Level.INFO;
            lastInfo = now;
            any = true;
        }
        log.atLevel(level).addKeyValue("template", template)
                .addKeyValue("progress", fraction < 0 ? "?" : Math.round(fraction * 100) + "%")
                .log(message);
        return level;
    }
}
