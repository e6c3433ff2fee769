package io.stasis.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FloorLinksTest {
    private static Figure figure(String name, double p50) {
        return Figure.of(name, "x", "ms", "", Stats.of(p50));
    }

    @Test
    void aCreateIsComparedWithSnapshotPlusRuncRun() {
        var linked = FloorLinks.apply(List.of(figure("create_first_output.tiny", 60), figure("floor.btrfs_snapshot.tiny", 5),
                figure("floor.runc_run.tiny", 25), figure("exec_true", 4)));
        var create = linked.getFirst();
        assertThat(create.floor()).isPresent();
        assertThat(create.floor().get().p50()).isEqualTo(30);
        assertThat(create.floor().get().ratio()).isEqualTo(2);
        assertThat(create.floor().get().parts()).containsExactly("floor.btrfs_snapshot.tiny", "floor.runc_run.tiny");
        assertThat(linked.get(3).floor()).as("exec without its floor measured").isEmpty();
    }

    @Test
    void sizedFiguresTakeTheFloorsOfTheirSize() {
        assertThat(FloorLinks.partsOf("hibernate_call.1GB")).containsExactly("floor.criu_dump.1GB");
        assertThat(FloorLinks.partsOf("hibernate_resume_call.idle")).containsExactly("floor.criu_restore.idle");
        assertThat(FloorLinks.partsOf("fork_files_call.5GB")).containsExactly("floor.btrfs_branch.5GB");
        assertThat(FloorLinks.partsOf("pause_call")).containsExactly("floor.freezer_freeze");
        assertThat(FloorLinks.partsOf("hibernate_image.1GB")).isEmpty();
        assertThat(FloorLinks.partsOf("floor.criu_dump.1GB")).isEmpty();
        var linked = FloorLinks.apply(List.of(figure("checkpoint_files_call.10MB", 20), figure("floor.btrfs_snapshot_ro.10MB", 5)));
        assertThat(linked.getFirst().floor().orElseThrow().ratio()).isEqualTo(4);
    }

    @Test
    void targetsAreJudgedOnTheMedian() {
        var f = figure("exec_true", 4).withTarget(Target.atMost(5));
        assertThat(f.met()).contains(true);
        assertThat(figure("exec_true", 6).withTarget(Target.atMost(5)).met()).contains(false);
        assertThat(figure("file_read.1MB", 6).met()).isEmpty();
    }

    @Test
    void theTableHasARowPerFigure() {
        var report = new Report(MachineFacts.gather(), Options.parse(), Options.Counts.defaults(),
                FloorLinks.apply(List.of(figure("exec_true", 4).withTarget(Target.atMost(5)), figure("floor.runc_exec_true", 20))),
                Map.of(), Map.of(), Duration.ofSeconds(3));
        String table = ResultTable.render(report);
        assertThat(table).contains("figure", "floor p50", "ratio", "exec_true", "p50 <= 5", "yes", "0.200x", "nearest-rank");
        assertThat(ResultJson.toJson(report).path("figures").size()).isEqualTo(2);
    }
}
