package io.stasis.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import org.junit.jupiter.api.Test;

class TableTest {
    @Test
    void alignsColumnsWithoutTrailingBlanks() {
        String text = Table.withHeaders("ID", "NAME", "STATE")
                .row("sbx_1", "a-long-name", "running")
                .row("sbx_22", null, "stopped")
                .render();
        assertThat(text).isEqualTo("""
                ID       NAME          STATE
                sbx_1    a-long-name   running
                sbx_22   -             stopped
                """);
    }

    @Test
    void lastColumnIsNotPadded() {
        String text = Table.withHeaders("A", "B").row("x", "").row("yy", "z").render();
        assertThat(text).isEqualTo("A    B\nx\nyy   z\n");
    }

    @Test
    void headerOnlyWhenEmpty() {
        assertThat(Table.withHeaders("ID", "NAME").render()).isEqualTo("ID   NAME\n");
        assertThat(Table.withoutHeaders().render()).isEmpty();
    }

    @Test
    void keyValueRows() {
        assertThat(Table.withoutHeaders().row("ID", "sbx_1").row("TEMPLATE", "tiny").render())
                .isEqualTo("ID         sbx_1\nTEMPLATE   tiny\n");
    }

    @Test
    void rowsMustFitTheHeader() {
        assertThatThrownBy(() -> Table.withHeaders("A", "B").row("x")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void humanSizes() {
        assertThat(HumanFormat.size(0L)).isEqualTo("0 B");
        assertThat(HumanFormat.size(1023L)).isEqualTo("1023 B");
        assertThat(HumanFormat.size(1024L)).isEqualTo("1.0 KiB");
        assertThat(HumanFormat.size(2_200_000L)).isEqualTo("2.1 MiB");
        assertThat(HumanFormat.size(10L * 1024 * 1024 - 1)).isEqualTo("10 MiB");
        assertThat(HumanFormat.size(1536L * 1024 * 1024)).isEqualTo("1.5 GiB");
        assertThat(HumanFormat.size(300L * 1024 * 1024 * 1024)).isEqualTo("300 GiB");
        assertThat(HumanFormat.size(Long.MAX_VALUE)).isEqualTo("8.0 EiB");
        assertThat(HumanFormat.size(null)).isNull();
    }

    @Test
    void numbersAndTimes() {
        assertThat(HumanFormat.number(1.0)).isEqualTo("1");
        assertThat(HumanFormat.number(0.5)).isEqualTo("0.5");
        assertThat(HumanFormat.time(Instant.parse("2026-11-29T10:00:00.123Z"))).isEqualTo("2026-11-29T10:00:00Z");
    }
}
