package io.stasis.core.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.testkit.Await;
import io.stasis.testkit.core.CoreOnFakes;
import io.stasis.testkit.fake.FakeSandboxRuntime.Step;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A warm pool sized to demand: takes that find it empty grow it, quiet shrinks it back to its floor. */
class WarmPoolTest {
    private static final String TEMPLATE = CoreOnFakes.TEMPLATE;
    @TempDir
    Path dir;
    private CoreOnFakes core;
    private final CountDownLatch startsMayGoOn = new CountDownLatch(1);

    @AfterEach
    void stop() {
        startsMayGoOn.countDown();
        core.close();
    }

    /** A pool whose starts wait until the test lets them go on, so that each take finds what the test expects. */
    private void poolOf(WarmPool.Sizing sizing) {
        core = new CoreOnFakes(CoreOnFakes.Host.in(dir), sizing);
        core.runtime.onStep(Step.CREATE, id -> {
            try {
                startsMayGoOn.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
    }

    private int waiting() {
        return core.pool.sizes().getOrDefault(TEMPLATE, 0);
    }

    @Test
    void eachTakeThatFindsThePoolEmptyDoublesWhatItKeepsUpToItsMax() {
        poolOf(new WarmPool.Sizing(1, 5));
        assertThat(core.pool.target(TEMPLATE)).isEqualTo(1);

        assertThat(core.pool.take(TEMPLATE)).isEmpty();
        assertThat(core.pool.target(TEMPLATE)).isEqualTo(2);
        assertThat(core.pool.take(TEMPLATE)).isEmpty();
        assertThat(core.pool.target(TEMPLATE)).isEqualTo(4);
        assertThat(core.pool.takeAny(TEMPLATE)).as("a files fork's take counts as well").isEmpty();
        assertThat(core.pool.target(TEMPLATE)).isEqualTo(5);
        assertThat(core.pool.take(TEMPLATE)).isEmpty();
        assertThat(core.pool.target(TEMPLATE)).as("never above the max").isEqualTo(5);

        startsMayGoOn.countDown();
        Await.until("the grown pool to fill", Duration.ofSeconds(10), () -> waiting() == 5);
        assertThat(core.pool.take(TEMPLATE)).isPresent();
        assertThat(core.pool.target(TEMPLATE)).as("a take that finds one does not grow it").isEqualTo(5);
    }

    @Test
    void warmSandboxesStartInTheBackgroundAndEachIsBroughtToTheForegroundAsItIsHandedOut() {
        poolOf(WarmPool.Sizing.fixed(2));
        core.pool.refill(TEMPLATE);
        startsMayGoOn.countDown();
        Await.until("the pool to fill", Duration.ofSeconds(10), () -> waiting() == 2);
        assertThat(core.pool.waiting()).allMatch(core.runtime::inBackground);

        var taken = core.pool.take(TEMPLATE).orElseThrow();
        assertThat(core.runtime.inBackground(taken)).isFalse();
        var any = core.pool.takeAny(TEMPLATE).orElseThrow();
        assertThat(core.runtime.inBackground(any.id())).isFalse();
    }

    @Test
    void aGrownPoolHalvesAfterAQuietSpellAndEndsWhatItHoldsBeyondThat() {
        poolOf(new WarmPool.Sizing(2, 8));
        for (int i = 0; i < 3; i++) core.pool.take(TEMPLATE);
        assertThat(core.pool.target(TEMPLATE)).isEqualTo(8);
        startsMayGoOn.countDown();
        Await.until("the grown pool to fill", Duration.ofSeconds(10), () -> waiting() == 8);

        core.clock.advance(WarmPool.QUIET.minusSeconds(1));
        core.pool.settle();
        assertThat(core.pool.target(TEMPLATE)).as("not yet quiet for long enough").isEqualTo(8);
        assertThat(waiting()).isEqualTo(8);

        core.clock.advance(Duration.ofSeconds(1));
        core.pool.settle();
        assertThat(core.pool.target(TEMPLATE)).isEqualTo(4);
        assertThat(waiting()).isEqualTo(4);
        assertThat(core.runtime.running()).as("the surplus ended").hasSize(4);

        core.pool.settle();
        assertThat(core.pool.target(TEMPLATE)).as("each halving waits a quiet spell of its own").isEqualTo(4);
        core.clock.advance(WarmPool.QUIET);
        core.pool.settle();
        core.clock.advance(WarmPool.QUIET);
        core.pool.settle();
        assertThat(core.pool.target(TEMPLATE)).as("never below the floor").isEqualTo(2);
        assertThat(waiting()).isEqualTo(2);
        assertThat(core.runtime.running()).hasSize(2);
    }

    @Test
    void aFixedPoolNeverGrows() {
        poolOf(WarmPool.Sizing.fixed(1));
        core.pool.take(TEMPLATE);
        core.pool.take(TEMPLATE);
        assertThat(core.pool.target(TEMPLATE)).isEqualTo(1);
    }

    @Test
    void aPoolOfNoneStartsNothingHoweverManyTakesFindItEmpty() {
        poolOf(new WarmPool.Sizing(0, 8));
        startsMayGoOn.countDown();
        core.pool.take(TEMPLATE);
        core.pool.takeAny(TEMPLATE);
        assertThat(core.pool.target(TEMPLATE)).isZero();
        assertThat(core.runtime.calls(Step.CREATE)).isZero();
    }
}
