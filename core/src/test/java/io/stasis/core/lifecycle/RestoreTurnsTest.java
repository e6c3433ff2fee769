package io.stasis.core.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import java.util.ArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class RestoreTurnsTest {
    @Test
    void noMoreRestoresRunAtOnceThanTheTurnsAllow() throws Exception {
        var turns = new RestoreTurns(2);
        var running = new AtomicInteger();
        var most = new AtomicInteger();
        var futures = new ArrayList<Future<String>>();
        try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < 12; i++) {
                String name = "restored " + i;
                futures.add(executor.submit(() -> turns.call(SandboxId.random(), () -> {
                    most.accumulateAndGet(running.incrementAndGet(), Math::max);
                    try {
                        Thread.sleep(5);
                    } catch (InterruptedException e) {
                        throw new AssertionError(e);
                    }
                    running.decrementAndGet();
                    return name;
                })));
            }
            for (int i = 0; i < futures.size(); i++) assertThat(futures.get(i).get(10, TimeUnit.SECONDS)).isEqualTo("restored " + i);
        }
        assertThat(most.get()).isEqualTo(2);
    }

    @Test
    void aFailedRestoreGivesItsTurnBack() {
        var turns = new RestoreTurns(1);
        assertThatThrownBy(() -> turns.run(SandboxId.random(), () -> {
            throw new IllegalStateException("criu failed");
        })).hasMessage("criu failed");
        assertThat(turns.call(SandboxId.random(), () -> "next")).isEqualTo("next");
    }

    @Test
    void oneInterruptedWhileWaitingNeverRestoresAndSaysWhichFork() throws Exception {
        var turns = new RestoreTurns(1);
        var holding = new CountDownLatch(1);
        var release = new CountDownLatch(1);
        var holder = Thread.ofVirtual().start(() -> turns.run(SandboxId.random(), () -> {
            holding.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }));
        holding.await();
        var fork = SandboxId.random();
        var restored = new AtomicInteger();
        var failure = new ArrayList<Throwable>();
        var waiter = Thread.ofVirtual().start(() -> {
            try {
                turns.run(fork, restored::incrementAndGet);
            } catch (StasisException e) {
                failure.add(e);
            }
        });
        while (waiter.getState() != Thread.State.WAITING) Thread.sleep(1);
        waiter.interrupt();
        waiter.join();
        release.countDown();
        holder.join();
        assertThat(restored.get()).isZero();
        assertThat(failure).singleElement().satisfies(e -> {
            assertThat(((StasisException) e).code()).isEqualTo(ErrorCode.RUNTIME_FAILED);
            assertThat(e.getMessage()).contains(fork.value());
        });
    }

    @Test
    void atLeastOneTurn() {
        assertThatThrownBy(() -> new RestoreTurns(0)).isInstanceOf(IllegalArgumentException.class);
    }
}
