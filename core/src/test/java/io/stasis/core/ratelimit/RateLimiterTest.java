package io.stasis.core.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

class RateLimiterTest {
    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final RateLimiter limiter = new RateLimiter(now::get);

    private static List<RateLimiter.Limit> one(String key, Rate rate) {
        return List.of(new RateLimiter.Limit(key, rate));
    }

    private void advance(Duration d) {
        now.addAndGet(d.toNanos());
    }

    @Test
    void aBurstPassesThenTheRateHoldsAndTheWaitItNamesIsEnough() {
        var rate = new Rate(10, 5);
        for (int i = 0; i < 5; i++) assertThat(limiter.take(one("k", rate))).isEmpty();
        var refused = limiter.take(one("k", rate));
        assertThat(refused.map(RateLimiter.Refusal::retryAfter)).contains(Duration.ofMillis(100));
        assertThat(refused.orElseThrow().keys()).containsExactly("k");
        advance(Duration.ofMillis(99));
        assertThat(limiter.take(one("k", rate))).as("not yet").isPresent();
        advance(Duration.ofMillis(1));
        assertThat(limiter.take(one("k", rate))).isEmpty();
        assertThat(limiter.take(one("other", rate))).as("each key its own").isEmpty();
    }

    @Test
    void aRefusalByOneLimitTakesNothingFromTheOthers() {
        var tight = new Rate(1, 1);
        var loose = new Rate(100, 3);
        assertThat(limiter.take(List.of(new RateLimiter.Limit("credential", loose), new RateLimiter.Limit("tenant", tight)))).isEmpty();
        for (int i = 0; i < 5; i++)
            assertThat(limiter.take(List.of(new RateLimiter.Limit("credential", loose), new RateLimiter.Limit("tenant", tight)))
                    .orElseThrow().keys()).as("only the one that had no token").containsExactly("tenant");
        // The credential's bucket lost one token (the admitted request), not six.
        assertThat(limiter.take(one("credential", loose))).isEmpty();
        assertThat(limiter.take(one("credential", loose))).isEmpty();
        assertThat(limiter.take(one("credential", loose))).isPresent();
    }

    @Test
    void perMinuteLetsAWholeMinutesWorthThroughAtOnce() {
        var creates = Rate.perMinute(6);
        for (int i = 0; i < 6; i++) assertThat(limiter.take(one("creates", creates))).isEmpty();
        assertThat(limiter.take(one("creates", creates)).map(RateLimiter.Refusal::retryAfter)).contains(Duration.ofSeconds(10));
        assertThat(Rate.perSecond(5)).isEqualTo(new Rate(5, 10));
        assertThatThrownBy(() -> new Rate(0, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Rate(1, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void bucketsThatFilledUpAgainAreDropped() {
        var rate = new Rate(1000, 1);
        for (int i = 0; i < 5000; i++) limiter.take(one("k" + i, rate));
        assertThat(limiter.size()).isLessThan(4096 + 1000);
        advance(Duration.ofSeconds(1));
        for (int i = 0; i < 5000; i++) limiter.take(one("again" + i, rate));
        assertThat(limiter.size()).as("the full ones went at the sweep, not the 10,000 seen").isLessThanOrEqualTo(5000);
    }

    /** In no stretch of time does a key admit more than its burst plus what the rate refills meanwhile. */
    @Property(tries = 300)
    void neverMoreThanTheBurstPlusTheRate(@ForAll @IntRange(min = 1, max = 50) int perSecond, @ForAll @IntRange(min = 1, max = 20) int burst,
                                          @ForAll @Size(min = 1, max = 200) List<@IntRange(min = 0, max = 300) Integer> gapsMs) {
        var clock = new AtomicLong();
        var own = new RateLimiter(clock::get);
        var rate = new Rate(perSecond, burst);
        var admitted = new ArrayList<Long>();
        for (int gap : gapsMs) {
            clock.addAndGet(gap * 1_000_000L);
            if (own.take(one("k", rate)).isEmpty()) admitted.add(clock.get());
        }
        for (int i = 0; i < admitted.size(); i++)
            for (int j = i; j < admitted.size(); j++) {
                double seconds = (admitted.get(j) - admitted.get(i)) / 1e9;
                assertThat(j - i + 1).isLessThanOrEqualTo((int) Math.floor(burst + seconds * perSecond + 1e-9));
            }
    }
}
