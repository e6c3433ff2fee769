package io.stasis.sdk;

import java.time.Duration;

/**
 * When to try a resumable stream again after its connection broke: at once the first time (a
 * dropped connection is usually just that), then after pauses doubling up to {@link #MAX_PAUSE},
 * and not at all once it has failed for {@link #GIVE_UP_AFTER} without a connection in between
 * (a service restart takes seconds; longer is an outage the caller should hear about).
 */
final class Reconnects {
    static final Duration GIVE_UP_AFTER = Duration.ofSeconds(60);
    static final Duration FIRST_PAUSE = Duration.ofMillis(100);
    static final Duration MAX_PAUSE = Duration.ofSeconds(2);
    /** A connection that stayed up this long worked: its end is a new failure, not one more of a series. */
    static final Duration STABLE = Duration.ofSeconds(5);

    /** How to wait; background streams wake up early when closed. */
    @FunctionalInterface
    interface Pause {
        void sleep(Duration duration) throws InterruptedException;
    }

    private final Pause pause;
    private final Duration giveUpAfter;
    private long failingSince;
    private int failures;
    private long connectedAt = -1;

    Reconnects(Pause pause, Duration giveUpAfter) {
        this.pause = pause;
        this.giveUpAfter = giveUpAfter;
    }

    /** Waits with {@link Thread#sleep}, giving up after {@link #GIVE_UP_AFTER}. */
    static Reconnects withDefaults() {
        return new Reconnects(Thread::sleep, GIVE_UP_AFTER);
    }

    /** A connection is up (headers arrived). */
    void connected() {
        connectedAt = System.nanoTime();
    }

    /** Something arrived over the connection: the stream works, the next failure starts afresh. */
    void progressed() {
        failures = 0;
    }

    /**
     * Waits before the next attempt, or throws {@code cause} when it is time to give up.
     *
     * @throws StasisClientException when interrupted (the interrupt flag stays set)
     */
    void afterFailure(StasisClientException cause) {
        long now = System.nanoTime();
        if (connectedAt >= 0 && now - connectedAt >= STABLE.toNanos()) failures = 0;
        connectedAt = -1;
        if (failures == 0) failingSince = now;
        failures++;
        if (now - failingSince >= giveUpAfter.toNanos()) throw cause;
        if (failures == 1) return;
        long millis = Math.min(MAX_PAUSE.toMillis(), FIRST_PAUSE.toMillis() << Math.min(failures - 2, 16));
        try {
            pause.sleep(Duration.ofMillis(millis));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            var interrupted = new StasisClientException("interrupted while reconnecting after: " + cause.getMessage(), e);
            interrupted.addSuppressed(cause);
            throw interrupted;
        }
    }
}
