package io.stasis.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class StatsTest {
    @Test
    void nearestRankOfOneToTwenty() {
        double[] samples = IntStream.rangeClosed(1, 20).mapToDouble(i -> 21 - i).toArray(); // unsorted on purpose
        var stats = Stats.of(samples);
        assertThat(stats.n()).isEqualTo(20);
        assertThat(stats.p50()).isEqualTo(10); // rank ceil(0.5 * 20) = 10
        assertThat(stats.p95()).isEqualTo(19); // rank ceil(0.95 * 20) = 19, not 20
        assertThat(stats.min()).isEqualTo(1);
        assertThat(stats.max()).isEqualTo(20);
    }

    @Test
    void nearestRankOfOddCountsAndSmallSeries() {
        assertThat(Stats.of(3, 1, 2).p50()).isEqualTo(2);
        assertThat(Stats.of(3, 1, 2).p95()).isEqualTo(3);
        assertThat(Stats.of(7).p50()).isEqualTo(7);
        assertThat(Stats.of(7).p95()).isEqualTo(7);
        assertThat(Stats.of(1, 2).p50()).isEqualTo(1);
        // 200 samples: p95 is rank 190.
        assertThat(Stats.of(IntStream.rangeClosed(1, 200).asDoubleStream().toArray()).p95()).isEqualTo(190);
        assertThat(Stats.of(IntStream.rangeClosed(1, 30).asDoubleStream().toArray()).p95()).isEqualTo(29);
    }

    @Test
    void noSamplesIsAnError() {
        assertThatThrownBy(Stats::of).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theSamplesArrayIsLeftAlone() {
        double[] samples = {3, 1, 2};
        Stats.of(samples);
        assertThat(samples).containsExactly(3, 1, 2);
    }
}
