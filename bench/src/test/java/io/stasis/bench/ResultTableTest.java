package io.stasis.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class ResultTableTest {
    private static Figure figure(String name, double p50) {
        return Figure.of(name, "x", "ms", "", Stats.of(p50));
    }

    @Test
    void eachGvisorFigureStandsBesideRuncsOfTheSameName() {
        var rows = ResultTable.sideBySide(List.of(figure("exec_true", 10), figure("floor.runc_exec_true", 8), figure("pause_call", 4),
                figure("gvisor.exec_true", 40), figure("gvisor.pause_call", 5), figure("gvisor.standby_only_here", 3)));
        assertThat(rows).hasSize(3);
        assertThat(rows.get(1)).containsExactly("exec_true", "ms", "10", "40", "4x");
        assertThat(rows.get(2).getFirst()).isEqualTo("pause_call");
    }

    @Test
    void aRunOfOneRuntimeHasNoSideBySide() {
        assertThat(ResultTable.sideBySide(List.of(figure("exec_true", 10)))).hasSize(1);
    }
}
