package io.stasis.sdk;

import java.time.Duration;

/** A {@link Subscription} that a {@link BackgroundStream} reads: open, awaited and closed as its stream is. */
abstract class StreamedSubscription implements Subscription {
    /** The stream behind it (set once it started). */
    abstract BackgroundStream stream();

    @Override
    public boolean isOpen() {
        return stream().isOpen();
    }

    @Override
    public boolean await(Duration timeout) throws InterruptedException {
        return stream().await(timeout);
    }

    @Override
    public void close() {
        stream().close();
    }
}
