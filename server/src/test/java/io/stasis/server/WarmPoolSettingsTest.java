package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.lifecycle.WarmPool;
import org.junit.jupiter.api.Test;

/** The warm pool's flags: two ready per template at rest, up to eight under demand, in any order of the flags. */
class WarmPoolSettingsTest {

    @Test
    void twoAtRestUpToEightUnderDemand() {
        assertThat(ServerConfig.parse().warmPool()).isEqualTo(new WarmPool.Sizing(2, 8));
    }

    @Test
    void eachFlagSetsItsOwnBoundInEitherOrder() {
        assertThat(ServerConfig.parse("--warm-pool", "4", "--warm-pool-max", "16").warmPool()).isEqualTo(new WarmPool.Sizing(4, 16));
        assertThat(ServerConfig.parse("--warm-pool-max=16", "--warm-pool=4").warmPool()).isEqualTo(new WarmPool.Sizing(4, 16));
        assertThat(ServerConfig.parse("--warm-pool", "0").warmPool().floor()).as("none at all").isZero();
    }

    @Test
    void aMaxBelowTheFloorKeepsThePoolAtTheFloor() {
        var sizing = ServerConfig.parse("--warm-pool", "10").warmPool();
        assertThat(sizing.ceiling()).isEqualTo(10);
        assertThat(ServerConfig.parse("--warm-pool-max", "2", "--warm-pool", "3").warmPool().ceiling()).isEqualTo(3);
    }

    @Test
    void badValuesAreRefusedWithTheFlagAndTheValue() {
        assertThatThrownBy(() -> ServerConfig.parse("--warm-pool-max", "-1")).isInstanceOf(ServerConfig.UsageException.class)
                .hasMessageContaining("--warm-pool-max").hasMessageContaining("'-1'");
        assertThatThrownBy(() -> ServerConfig.parse("--warm-pool-max", "101")).isInstanceOf(ServerConfig.UsageException.class)
                .hasMessageContaining("between 0 and 100");
        assertThat(ServerConfig.usage()).contains("--warm-pool N", "--warm-pool-max N");
    }
}
