package io.stasis.testkit;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Waiting for a condition with a deadline, instead of sleeping a guessed time. */
public final class Await {
    private Await() {
    }

    public static void until(String what, Duration deadline, BooleanSupplier condition) {
        long end = System.nanoTime() + deadline.toNanos();
        long pause = 1;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > end) throw new AssertionError("timed out after " + deadline.toMillis() + " ms waiting for " + what);
            try {
                Thread.sleep(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting for " + what, e);
            }
            pause = Math.min(pause * 2, 100);
        }
    }
}
