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
        assertThat(stats.p90()).isEqualTo(18); // rank ceil(0.9 * 20) = 18
        assertThat(stats.p95()).isEqualTo(19); // rank ceil(0.95 * 20) = 19, not 20
        assertThat(stats.p99()).isEqualTo(20); // rank ceil(0.99 * 20) = 20
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
        // 200 samples: p90 is rank 180, p99 rank 198; 1000: p99 is rank 990.
        assertThat(Stats.of(IntStream.rangeClosed(1, 200).asDoubleStream().toArray()).p90()).isEqualTo(180);
        assertThat(Stats.of(IntStream.rangeClosed(1, 200).asDoubleStream().toArray()).p99()).isEqualTo(198);
        assertThat(Stats.of(IntStream.rangeClosed(1, 1000).asDoubleStream().toArray()).p99()).isEqualTo(990);
        assertThat(Stats.single(4)).isEqualTo(new Stats(1, 4, 4, 4, 4, 4, 4));
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
