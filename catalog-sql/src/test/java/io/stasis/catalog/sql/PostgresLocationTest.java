package io.stasis.catalog.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Optional;
import org.junit.jupiter.api.Test;

class PostgresLocationTest {
    @Test
    void parsesEveryPartAndDecodesTheCredentials() {
        var location = PostgresLocation.parse("postgresql://st%40sis:p%3Ass+w%2Fd@db.internal:6543/stasis_prod", Optional.of("ignored"));
        assertThat(location).isEqualTo(new PostgresLocation("db.internal", 6543, "stasis_prod", "st@sis", Optional.of("p:ss+w/d")));
        assertThat(location.jdbcUrl()).isEqualTo("jdbc:postgresql://db.internal:6543/stasis_prod");
    }

    @Test
    void thePortDefaultsTo5432AndThePasswordToTheFallback() {
        var location = PostgresLocation.parse("postgres://stasis@[::1]/cat", Optional.of("from-env"));
        assertThat(location.port()).isEqualTo(5432);
        assertThat(location.host()).isEqualTo("[::1]");
        assertThat(location.password()).contains("from-env");
        assertThat(PostgresLocation.parse("postgresql://stasis@h/cat", Optional.of("")).password()).isEmpty();
    }

    @Test
    void itsTextNeverShowsThePassword() {
        var location = PostgresLocation.parse("postgresql://stasis:hunter2@h:1/cat", Optional.empty());
        assertThat(location.toString()).isEqualTo("postgresql://stasis@h:1/cat").doesNotContain("hunter2");
    }

    @Test
    void malformedUrlsSayWhatIsMissingWithoutQuotingThePassword() {
        assertThatThrownBy(() -> PostgresLocation.parse("mysql://u@h/db", Optional.empty())).hasMessageContaining("postgresql://");
        assertThatThrownBy(() -> PostgresLocation.parse("postgresql://u:secret1@h", Optional.empty()))
                .hasMessageContaining("names no database").hasMessageNotContaining("secret1");
        assertThatThrownBy(() -> PostgresLocation.parse("postgresql://h/db", Optional.empty())).hasMessageContaining("no user");
        assertThatThrownBy(() -> PostgresLocation.parse("postgresql://u:secret2@/db", Optional.empty()))
                .hasMessageContaining("no host").hasMessageNotContaining("secret2");
        assertThatThrownBy(() -> PostgresLocation.parse("postgresql://u@h/db?sslmode=require", Optional.empty())).hasMessageContaining("?parameters");
        assertThatThrownBy(() -> PostgresLocation.parse("postgresql://u@h/db;drop", Optional.empty())).hasMessageContaining("database must be");
        assertThatThrownBy(() -> PostgresLocation.parse("postgresql://u:secret3@h:99999/db", Optional.empty()))
                .hasMessageNotContaining("secret3");
    }
}
