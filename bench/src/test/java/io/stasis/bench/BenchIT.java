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
 * figure is in the JSON with sensible numbers. Nothing here judges speed.
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
            "floor.runc_exec_true");

    @Test
    void aTinyRunMeasuresEveryScenarioAndLeavesNothingBehind(@TempDir Path dir) throws Exception {
        Path json = dir.resolve("results.json");
        var report = Benchmark.run(Options.parse("--iterations-scale", "0.01", "--json", json.toString()));
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
        for (String linked : List.of("create_first_output.tiny", "create_first_output.base", "exec_true"))
            assertThat(figures.get(linked).path("floor").path("ratio").asDouble()).as(linked + " ratio").isPositive();
        assertThat(figures.get("create_first_output.tiny").path("target").path("met").isBoolean()).isTrue();
        assertThat(ResultTable.render(report)).contains("create_first_output.tiny", "floor.runc_exec_true");
    }
}
