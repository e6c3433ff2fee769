package io.stasis.sdk;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The thread behind a {@link Subscription}: runs a reading loop on a virtual thread, remembers
 * how it ended, and stops it on {@link #close()} by closing its current connection and waking
 * its reconnect pauses (the consumer's thread is never interrupted).
 */
final class BackgroundStream {
    /** How long {@link #close()} waits for the consumer to return before giving up on it. */
    private static final Duration CLOSE_WAIT = Duration.ofSeconds(10);

    /** The reading loop; returns when the stream is complete, throws when it failed. */
    @FunctionalInterface
    interface Loop {
        void run(BackgroundStream stream);
    }

    private final CountDownLatch closing = new CountDownLatch(1);
    private final CountDownLatch ended = new CountDownLatch(1);
    private volatile SseConnection connection;
    private volatile RuntimeException failure;
    private volatile Thread thread;

    private BackgroundStream() {
    }

    static BackgroundStream start(String name, Loop loop) {
        var stream = new BackgroundStream();
        Thread.ofVirtual().name(name).start(() -> stream.run(loop));
        return stream;
    }

    private void run(Loop loop) {
        thread = Thread.currentThread();
        try {
            loop.run(this);
        } catch (RuntimeException e) {
            if (!isClosing()) failure = e;
        } catch (Error e) {
            failure = new StasisClientException("the stream's thread failed: " + e, e);
            throw e;
        } finally {
            SseConnection last = connection;
            if (last != null) last.close();
            ended.countDown();
        }
    }

    /** The connection now being read, closed at once if the stream is closing. */
    void reading(SseConnection current) {
        connection = current;
        if (isClosing()) current.close();
    }

    boolean isClosing() {
        return closing.getCount() == 0;
    }

    /** Waits for a reconnect, returning early when closed. */
    void pause(Duration duration) throws InterruptedException {
        closing.await(duration.toMillis(), TimeUnit.MILLISECONDS);
    }

    boolean isOpen() {
        return ended.getCount() > 0 && !isClosing();
    }

    boolean await(Duration timeout) throws InterruptedException {
        boolean done = timeout == null ? awaitForever() : ended.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
        RuntimeException failed = failure;
        if (done && failed != null) throw failed;
        return done;
    }

    private boolean awaitForever() throws InterruptedException {
        ended.await();
        return true;
    }

    void close() {
        closing.countDown();
        SseConnection current = connection;
        if (current != null) current.close();
        if (Thread.currentThread() == thread) return;
        try {
            ended.await(CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
