package io.stasis.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole benchmark with 1-2 iterations per series (base included), as a smoke test: every
 * figure is in the JSON with sensible numbers. The live-state scenarios run their small sizes only
 * (no 1 GiB of memory, no gigabytes in a root). Nothing here judges speed.
 */
@Tag("root")
class BenchIT {
    /** Figures that are differences of host-wide readings: with one sandbox, noise can make them any sign. */
    private static final List<String> DIFFERENCES = List.of("idle_memory.total_per_sandbox", "idle_memory.overhead_per_sandbox",
            "idle_memory.service_rss_per_sandbox", "idle_memory.kernel_per_sandbox", "idle_memory.total_on_create_per_sandbox",
            "idle_memory.total_on_delete_per_sandbox");

    private static final List<String> EXPECTED = List.of(
            "create_first_output.tiny", "create_call.tiny", "first_exec.tiny",
            "create_first_output.base", "create_call.base", "first_exec.base",
            "exec_true",
            "file_write.1MB", "file_read.1MB", "file_write.100MB", "file_read.100MB",
            "idle_memory.total_per_sandbox", "idle_memory.total_on_create_per_sandbox", "idle_memory.total_on_delete_per_sandbox",
            "idle_memory.processes_pss_per_sandbox", "idle_memory.overhead_per_sandbox", "idle_memory.kernel_per_sandbox",
            "idle_memory.service_rss_per_sandbox", "idle_memory.cgroup_charge_per_sandbox",
            "floor.btrfs_snapshot.tiny", "floor.runc_run.tiny", "floor.btrfs_snapshot.base", "floor.runc_run.base",
            "floor.runc_exec_true",
            "pause_call", "resume_call", "get_call", "floor.freezer_freeze", "floor.freezer_thaw", "floor.runc_pause", "floor.runc_resume",
            "hibernate_rss.idle", "hibernate_call.idle", "hibernate_resume_call.idle", "hibernate_image.idle",
            "floor.criu_dump.idle", "floor.criu_restore.idle", "floor.criu_image.idle",
            "hibernate_rss.100MB", "hibernate_call.100MB", "hibernate_resume_call.100MB", "hibernate_image.100MB",
            "floor.criu_dump.100MB", "floor.criu_restore.100MB", "floor.criu_image.100MB",
            "checkpoint_memory_call.tiny", "fork10_memory_call", "fork10_memory_per_sandbox", "floor.criu_restore.fork_tiny",
            "checkpoint_files_call.10MB", "fork_files_call.10MB", "floor.btrfs_snapshot_ro.10MB", "floor.btrfs_branch.10MB");

    @Test
    void aTinyRunMeasuresEveryScenarioAndLeavesNothingBehind(@TempDir Path dir) throws Exception {
        Path json = dir.resolve("results.json");
        var report = Benchmark.run(Options.parse("--iterations-scale", "0.01", "--max-size", "100M", "--json", json.toString()));
        ResultJson.write(report, json);

        assertThat(report.errors()).as("failed scenarios or leftovers").isEmpty();
        JsonNode root = new ObjectMapper().readTree(Files.readString(json));
        assertThat(root.path("machine").path("cores").asInt()).isPositive();
        assertThat(root.path("machine").path("loadAverageAtStart").size()).isEqualTo(3);
        assertThat(root.path("percentileMethod").asText()).contains("nearest-rank");

        Map<String, JsonNode> figures = new HashMap<>();
        root.path("figures").forEach(f -> figures.put(f.path("name").asText(), f));
        assertThat(figures.keySet()).containsExactlyInAnyOrderElementsOf(EXPECTED);
        for (String name : EXPECTED) {
            JsonNode f = figures.get(name);
            assertThat(f.path("n").asInt()).as(name + " n").isBetween(1, 3);
            for (String field : List.of("p50", "p95", "min", "max")) {
                double value = f.path(field).asDouble(Double.NaN);
                assertThat(value).as(name + " " + field).isFinite();
                if (!DIFFERENCES.contains(name)) assertThat(value).as(name + " " + field).isPositive();
            }
        }
        for (String linked : List.of("create_first_output.tiny", "create_first_output.base", "exec_true", "pause_call", "resume_call",
                "hibernate_call.100MB", "hibernate_resume_call.idle", "checkpoint_files_call.10MB", "fork_files_call.10MB",
                "fork10_memory_per_sandbox"))
            assertThat(figures.get(linked).path("floor").path("ratio").asDouble()).as(linked + " ratio").isPositive();
        assertThat(figures.get("create_first_output.tiny").path("target").path("met").isBoolean()).isTrue();
        assertThat(figures.get("hibernate_rss.100MB").path("p50").asDouble()).as("the allocation is resident").isGreaterThan(95);
        assertThat(figures.get("hibernate_image.100MB").path("p50").asDouble()).as("and dumped").isGreaterThan(95);
        assertThat(root.path("details").path("hibernate").path("skipped").has("1GB")).isTrue();
        assertThat(root.path("details").path("checkpoint").path("skipped").has("5GB")).isTrue();
        assertThat(ResultTable.render(report)).contains("create_first_output.tiny", "floor.runc_exec_true");
    }
}
