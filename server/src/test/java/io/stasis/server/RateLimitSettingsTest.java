package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.ratelimit.Rate;
import org.junit.jupiter.api.Test;

/** The rate flags: none by default, N or N:BURST a second, N a minute for creates, 0 for none. */
class RateLimitSettingsTest {
    @Test
    void noneByDefault() {
        assertThat(ServerConfig.parse().rateLimits()).isEqualTo(RateLimitSettings.NONE);
    }

    @Test
    void ratesWithAndWithoutTheirBurst() {
        var rates = ServerConfig.parse("--tenant-requests-per-second", "50", "--credential-requests-per-second=10:15",
                "--tenant-creates-per-minute", "30").rateLimits();
        assertThat(rates.tenantRequests()).contains(new Rate(50, 100));
        assertThat(rates.credentialRequests()).contains(new Rate(10, 15));
        assertThat(rates.tenantCreates()).contains(Rate.perMinute(30));
        assertThat(ServerConfig.parse("--tenant-requests-per-second", "50", "--tenant-requests-per-second", "0").rateLimits().tenantRequests())
                .as("0: none again").isEmpty();
    }

    @Test
    void badValuesSayWhatIsExpected() {
        assertThatThrownBy(() -> ServerConfig.parse("--tenant-requests-per-second", "fast")).isInstanceOf(ServerConfig.UsageException.class)
                .hasMessageContaining("whole number from 0 (none) to 1000000");
        assertThatThrownBy(() -> ServerConfig.parse("--credential-requests-per-second", "5:0")).hasMessageContaining("a burst must be 1 or more");
        assertThatThrownBy(() -> ServerConfig.parse("--tenant-creates-per-minute", "-1")).hasMessageContaining("--tenant-creates-per-minute");
        assertThat(ServerConfig.usage()).contains("--tenant-requests-per-second N[:BURST]");
    }
}
