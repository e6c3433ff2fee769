package io.stasis.core.concurrent;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A task run every period on a virtual thread of its own until closed: the background passes of a
 * service (sweeps, keepers). A run that fails is logged and the next one goes on; closing wakes the
 * thread and waits for the run in progress, at most a bound.
 */
public final class Periodic implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Periodic.class);

    private final String name;
    private final Duration period;
    private final Duration closeWait;
    private final Runnable task;
    private final Thread thread;
    private volatile boolean closed;

    private Periodic(String name, Duration period, Duration closeWait, Runnable task) {
        this.name = name;
        this.period = period;
        this.closeWait = closeWait;
        this.task = task;
        this.thread = Thread.ofVirtual().name(name).unstarted(this::runUntilClosed);
    }

    /**
     * Starts running {@code task} every {@code period}, the first time one period from now.
     *
     * @param closeWait how long {@link #close} waits for a run in progress
     */
    public static Periodic start(String name, Duration period, Duration closeWait, Runnable task) {
        var periodic = new Periodic(name, period, closeWait, task);
        periodic.thread.start();
        return periodic;
    }

    private void runUntilClosed() {
        while (!closed) {
            LockSupport.parkNanos(period.toNanos());
            if (closed) return;
            try {
                task.run();
            } catch (RuntimeException e) {
                log.atWarn().addKeyValue("task", name).setCause(e).log("a background pass failed; the next one goes on");
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        LockSupport.unpark(thread);
        try {
            thread.join(closeWait);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
