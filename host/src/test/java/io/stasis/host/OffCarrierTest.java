package io.stasis.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class OffCarrierTest {
    @Test
    void aVirtualThreadsWorkRunsOnAPlatformThreadAndAPlatformThreadsWorkWhereItIs() throws Exception {
        var ranOn = new AtomicReference<Thread>();
        Thread.ofVirtual().start(() -> ranOn.set(OffCarrier.call(Thread::currentThread))).join();
        assertThat(ranOn.get().isVirtual()).isFalse();

        assertThat(OffCarrier.call(Thread::currentThread)).isSameAs(Thread.currentThread());
    }

    @Test
    void whatTheWorkThrowsReachesTheCallerAsItIs() {
        assertThatThrownBy(() -> inVirtualThread(() -> OffCarrier.run(() -> {
            throw new IOException("no such tool");
        }))).isInstanceOf(IOException.class).hasMessage("no such tool");
        assertThatThrownBy(() -> inVirtualThread(() -> OffCarrier.run(() -> {
            throw new IllegalStateException("bad descriptor");
        }))).isInstanceOf(IllegalStateException.class).hasMessage("bad descriptor");
    }

    @Test
    void anInterruptedCallerWaitsForTheWorkToEndAndKeepsItsInterrupt() throws Exception {
        var started = new CountDownLatch(1);
        var release = new CountDownLatch(1);
        var finished = new AtomicBoolean();
        var interruptedAfter = new AtomicBoolean();
        var caller = Thread.ofVirtual().start(() -> {
            try {
                OffCarrier.run(() -> {
                    started.countDown();
                    release.await();
                    finished.set(true);
                });
            } catch (InterruptedException e) {
                throw new AssertionError("the work's own wait was not interrupted", e);
            }
            interruptedAfter.set(Thread.currentThread().isInterrupted());
        });
        started.await();
        caller.interrupt();
        Thread.sleep(50);
        assertThat(caller.isAlive()).as("the caller waits for the work, interrupted or not").isTrue();

        release.countDown();
        caller.join();
        assertThat(finished).isTrue();
        assertThat(interruptedAfter).isTrue();
    }

    /** Runs {@code action} in a virtual thread and throws what it threw. */
    private static void inVirtualThread(OffCarrier.Action<Exception> action) throws Exception {
        var thrown = new AtomicReference<Exception>();
        Thread.ofVirtual().start(() -> {
            try {
                action.run();
            } catch (Exception e) {
                thrown.set(e);
            }
        }).join();
        if (thrown.get() != null) throw thrown.get();
    }
}
