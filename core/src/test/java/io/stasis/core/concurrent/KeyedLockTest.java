package io.stasis.core.concurrent;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;

class KeyedLockTest {
    @Test
    void holdersOfOneKeyNeverOverlapAndNoKeyStaysAfterwards() throws Exception {
        var locks = new KeyedLock<Integer>();
        var inside = new AtomicIntegerArray(7);
        var overlaps = new AtomicInteger();
        try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
            var futures = new ArrayList<Future<?>>();
            // Many short-lived keys, each taken by several threads at once: a key that is done goes away
            // while others may still be on their way to it, the moment a forgotten lock would let two in.
            for (int t = 0; t < 16; t++) {
                futures.add(executor.submit(() -> {
                    for (int key = 0; key < 2_000; key++) {
                        int k = key % 7;
                        locks.exclusive(k, () -> {
                            if (inside.incrementAndGet(k) > 1) overlaps.incrementAndGet();
                            Thread.onSpinWait();
                            inside.decrementAndGet(k);
                            return null;
                        });
                    }
                    return null;
                }));
            }
            for (var f : futures) f.get(60, TimeUnit.SECONDS);
        }
        assertThat(overlaps).hasValue(0);
        assertThat(locks.keysInUse()).isZero();
    }

    @Test
    void sharedHoldersRunTogetherAndAnExclusiveOneWaitsForThem() throws Exception {
        var locks = new KeyedLock<String>();
        var bothIn = new CountDownLatch(2);
        var release = new CountDownLatch(1);
        var exclusiveRan = new CountDownLatch(1);
        try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < 2; i++) {
                executor.submit(() -> locks.shared("a", () -> {
                    bothIn.countDown();
                    await(release);
                    return null;
                }));
            }
            assertThat(bothIn.await(10, TimeUnit.SECONDS)).as("two shared holders at once").isTrue();
            executor.submit(() -> locks.exclusive("a", () -> {
                exclusiveRan.countDown();
                return null;
            }));
            assertThat(exclusiveRan.await(200, TimeUnit.MILLISECONDS)).as("exclusive while shared are held").isFalse();
            release.countDown();
            assertThat(exclusiveRan.await(10, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(locks.keysInUse()).isZero();
    }

    @Test
    void tryExclusiveFailsAtOnceWhileAnotherThreadHoldsTheKeyAndLeavesNothing() throws Exception {
        var locks = new KeyedLock<String>();
        var held = new CountDownLatch(1);
        var release = new CountDownLatch(1);
        try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
            executor.submit(() -> locks.exclusive("name", () -> {
                held.countDown();
                await(release);
                return null;
            }));
            assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(locks.tryExclusive("name")).isEmpty();
            try (var other = locks.tryExclusive("other").orElseThrow()) {
                assertThat(locks.keysInUse()).isEqualTo(2);
            }
            release.countDown();
        }
        assertThat(locks.keysInUse()).isZero();
        try (var now = locks.tryExclusive("name").orElseThrow()) {
            assertThat(locks.keysInUse()).isOne();
        }
        assertThat(locks.keysInUse()).isZero();
    }

    @Test
    void anExceptionInTheActionReleasesTheKey() {
        var locks = new KeyedLock<String>();
        try {
            locks.exclusive("a", () -> {
                throw new IllegalStateException("boom");
            });
        } catch (IllegalStateException expected) {
            // the key must be free again
        }
        assertThat(locks.keysInUse()).isZero();
        assertThat(locks.tryExclusive("a")).isPresent().get().satisfies(KeyedLock.Held::close);
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
