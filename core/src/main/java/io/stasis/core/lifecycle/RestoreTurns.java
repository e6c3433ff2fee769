package io.stasis.core.lifecycle;

import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import java.util.concurrent.Semaphore;
import java.util.function.Supplier;

/**
 * Memory fork restores a few at a time, host-wide, whether a fork's own or a spare's
 * ({@link ForkSpares}): a restore is mostly CPU, so a hundred at once on two cores are ready no
 * sooner than in turn, and each takes so long that it outlasts its tool's timeout (100 spares at
 * once, and a fork of 100, failed so). One waiting for its turn has not started its restore, so
 * its timeout is not running. Turns are given in the order they were asked for.
 */
public final class RestoreTurns {
    private final Semaphore turns;

    /** @param atOnce restores that may run at once */
    public RestoreTurns(int atOnce) {
        if (atOnce < 1) throw new IllegalArgumentException("atOnce must be at least 1, was " + atOnce);
        turns = new Semaphore(atOnce, true);
    }

    /** Enough at once to keep every core of this host busy while others wait on the disk. */
    public static RestoreTurns forThisHost() {
        return new RestoreTurns(Math.max(4, 3 * Runtime.getRuntime().availableProcessors()));
    }

    /** Runs the restore of {@code fork} when its turn comes; the fork's sandbox names the failure to wait. */
    public void run(SandboxId fork, Runnable restore) {
        call(fork, () -> {
            restore.run();
            return null;
        });
    }

    /** As {@link #run}, returning what the restore returned. */
    public <T> T call(SandboxId fork, Supplier<T> restore) {
        try {
            turns.acquire();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw StasisException.runtimeFailed(fork.value(), "restore", "interrupted while waiting for its turn", e);
        }
        try {
            return restore.get();
        } finally {
            turns.release();
        }
    }
}
