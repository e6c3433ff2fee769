package io.stasis.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine.TypeConversionException;

class DurationsTest {
    @ParameterizedTest
    @CsvSource({"500ms, 500", "30s, 30000", "2m, 120000", "1h, 3600000", "45, 45000", "1.5s, 1500",
            "0.25m, 15000", "1ms, 1", " 10 s , 10000", "7d, 604800000", "0.5d, 43200000"})
    void parses(String text, long millis) {
        assertThat(Durations.parse(text)).isEqualTo(Duration.ofMillis(millis));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "s", "10x", "-5s", "1.5ms", "0s", "0", "1w", "ten seconds", "5 m s"})
    void refuses(String text) {
        assertThatThrownBy(() -> Durations.parse(text)).isInstanceOf(TypeConversionException.class);
    }
}
