package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The disk flags of the service: defaults, each flag, and clear refusals naming the values. */
class DiskSettingsTest {

    @Test
    void sandboxesGetATenGibDiskAndMayAskForUpToTheDefaultPoolsSize() {
        var config = ServerConfig.parse();
        assertThat(config.defaultResources().diskMb()).isEqualTo(10240);
        assertThat(config.maxDiskMb()).isEqualTo(65536);
        assertThat(config.defaultResources().memoryMb()).isEqualTo(1024);
    }

    @Test
    void theFlagsChangeTheDefaultAndTheMaximumAndKeepTheOtherResources() {
        var config = ServerConfig.parse("--default-memory-mb", "512", "--default-disk-mb", "2048", "--max-disk-mb=4096",
                "--default-cpus", "2");
        assertThat(config.defaultResources().diskMb()).isEqualTo(2048);
        assertThat(config.defaultResources().memoryMb()).isEqualTo(512);
        assertThat(config.defaultResources().cpus()).isEqualTo(2.0);
        assertThat(config.maxDiskMb()).isEqualTo(4096);
    }

    @Test
    void badValuesAreRefusedWithTheFlagAndTheValue() {
        assertThatThrownBy(() -> ServerConfig.parse("--default-disk-mb", "10")).isInstanceOf(ServerConfig.UsageException.class)
                .hasMessageContaining("--default-disk-mb").hasMessageContaining("'10'");
        assertThatThrownBy(() -> ServerConfig.parse("--default-disk-mb", "2048", "--max-disk-mb", "1024"))
                .isInstanceOf(ServerConfig.UsageException.class)
                .hasMessage("--default-disk-mb 2048 is above --max-disk-mb 1024");
        assertThat(ServerConfig.usage()).contains("--default-disk-mb N", "--max-disk-mb N");
    }
}
