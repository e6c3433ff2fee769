package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.node.NodeLimits;
import org.junit.jupiter.api.Test;

/** {@code --catalog}: SQLite in the data directory by default, a PostgreSQL URL otherwise, refusals that never quote a password. */
class CatalogSettingsTest {

    @Test
    void theCatalogIsTheDataDirectorysSqliteFileUnlessAUrlIsGiven() {
        assertThat(ServerConfig.parse().catalog()).isEmpty();
        assertThat(ServerConfig.parse("--catalog", "sqlite").catalog()).isEmpty();
        var location = ServerConfig.parse("--catalog", "postgresql://stasis:pw@db:6000/cat").catalog().orElseThrow();
        assertThat(location.toString()).isEqualTo("postgresql://stasis@db:6000/cat");
        assertThat(location.password()).contains("pw");
        assertThat(ServerConfig.usage()).contains("--catalog URL");
    }

    @Test
    void aNodesLimitsAreNoneUnlessGivenAndNeverNegative() {
        assertThat(ServerConfig.parse().nodeLimits()).isEqualTo(NodeLimits.NONE);
        assertThat(ServerConfig.parse("--node-max-sandboxes", "3", "--node-max-memory-mb", "4096").nodeLimits()).isEqualTo(new NodeLimits(3, 4096));
        assertThatThrownBy(() -> ServerConfig.parse("--node-max-sandboxes", "-1")).isInstanceOf(ServerConfig.UsageException.class)
                .hasMessageStartingWith("--node-max-sandboxes");
    }

    @Test
    void aMalformedUrlIsAUsageErrorWithoutItsPassword() {
        assertThatThrownBy(() -> ServerConfig.parse("--catalog", "postgresql://stasis:hunter2@db"))
                .isInstanceOf(ServerConfig.UsageException.class)
                .hasMessageStartingWith("--catalog: ").hasMessageContaining("names no database").hasMessageNotContaining("hunter2");
        assertThatThrownBy(() -> ServerConfig.parse("--catalog", "/var/lib/other.db"))
                .isInstanceOf(ServerConfig.UsageException.class).hasMessageContaining("postgresql://");
    }
}
