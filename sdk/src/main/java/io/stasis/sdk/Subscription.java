package io.stasis.sdk;

import java.time.Duration;

/**
 * A live stream read in the background that hands what arrives to a consumer, until it is closed,
 * the server ends it, or its connection cannot be restored. The consumer is called on the
 * subscription's own thread, one item at a time, in order.
 *
 * <pre>{@code
 * try (Subscription s = client.streamEvents(0, e -> System.out.println(e.type()))) {
 *     s.await(Duration.ofMinutes(5));      // or do other work; close() stops it
 * }
 * }</pre>
 */
public interface Subscription extends AutoCloseable {
    /** Whether items may still arrive. */
    boolean isOpen();

    /**
     * Waits until it ends, at most {@code timeout} (null: no limit).
     *
     * @return true when it has ended, false when the time ran out first
     * @throws RuntimeException what ended it, when that was a failure: a
     *                          {@link StasisConnectionException} for a connection that could not be
     *                          restored, or whatever the consumer threw
     */
    boolean await(Duration timeout) throws InterruptedException;

    /**
     * Stops it. Once this returns the consumer is not called again (unless called from the
     * consumer itself, which then returns normally). Idempotent.
     */
    @Override
    void close();
}
