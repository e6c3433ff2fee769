package io.stasis.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole benchmark with 1-2 iterations per series (base included), as a smoke test: every
 * figure is in the JSON with sensible numbers. The live-state scenarios run their small sizes only
 * (no 1 GiB of memory, no gigabytes in a root), the blob scenarios a root of 32 MiB, 16 MiB of
 * data and a sandbox of 100 MiB restored on fresh instances. Nothing here judges speed.
 */
@Tag("root")
@Timeout(value = 30, unit = TimeUnit.MINUTES) // its one test runs every scenario; the build gives other tests 10
class BenchIT {
    /** Figures that are differences (of host-wide readings, or of two paths): at this scale, noise can make them any sign. */
    private static final List<String> DIFFERENCES = List.of("idle_memory.total_per_sandbox", "idle_memory.overhead_per_sandbox",
            "idle_memory.service_rss_per_sandbox", "idle_memory.kernel_per_sandbox", "idle_memory.total_on_create_per_sandbox",
            "idle_memory.total_on_delete_per_sandbox", "followers.rss_per_follower",
            // one or a few samples of two paths each: at this scale the difference can go either way
            "egress.ttfb_overhead", "preview.busybox.latency_overhead", "preview.python.latency_overhead");
    /** Figures with a sample per follower (10 at this scale) or per latency line (2). */
    private static final List<String> PER_FOLLOWER = List.of("followers.open_each", "followers.delivery", "lifecycle_under_load",
            "crowd.get", "crowd.exec");
    /** Measured only where the service has the files watch route (another change brings it). */
    private static final List<String> FILE_WATCH = List.of("file_event_latency.put", "file_event_latency.exec_touch", "file_put_call");

    private static final List<String> EXPECTED = List.of(
            "lifecycles_per_second", "lifecycle_under_load",
            "crowd.get", "crowd.exec", "crowd.churn_per_second", "crowd.create_call",
            "template_build.cold", "template_build.warm", "floor.template_steps_by_hand", "create_first_answer.prebooted_fast",
            "create_first_answer.plain_fast", "create_first_answer.prebooted_slow", "create_first_answer.plain_slow",
            "nodes.exec_forwarded", "floor.nodes_exec_owner", "nodes.get_forwarded", "floor.nodes_get_owner",
            "nodes.create_postgresql", "floor.nodes_create_sqlite", "nodes.create_forwarded",
            "nodes.loss_to_answer", "floor.nodes_lease_and_grace",
            "e2b.create", "floor.e2b_create_java", "e2b.run", "floor.e2b_run_java", "e2b.pause_connect", "floor.e2b_pause_connect_java",
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
            "standby_call.idle", "standby_paged_out.idle", "standby_ram_freed.idle", "standby_pages_freed.idle", "standby_resume_to_answer.idle",
            "standby_resume_call.idle",
            "hibernate_rss.idle", "hibernate_call.idle", "hibernate_resume_call.idle", "hibernate_image.idle",
            "floor.criu_dump.idle", "floor.criu_restore.idle", "floor.criu_image.idle",
            "hibernate_rss.100MB", "hibernate_call.100MB", "hibernate_resume_call.100MB", "hibernate_image.100MB",
            "floor.criu_dump.100MB", "floor.criu_restore.100MB", "floor.criu_image.100MB",
            "checkpoint_memory_call.tiny", "fork1_memory_call", "fork10_memory_call", "fork10_memory_per_sandbox", "fork100_memory_call",
            "fork1_memory_spare_call", "fork10_memory_spares_call", "fork100_memory_spares_call", "spares100_ready",
            "fork1_memory_pss", "fork10_memory_pss", "fork10_memory_pss_shared", "floor.criu_restore.fork_tiny",
            "checkpoint_files_call.10MB", "fork_files_call.10MB", "floor.btrfs_snapshot_ro.10MB", "floor.btrfs_branch.10MB",
            "output_stream.follow", "output_stream.exec", "output_stream.exec_sdk", "floor.output_write",
            "output_latency.stdin_to_event", "output_latency.stdin_call", "output_latency.write_to_event",
            "followers.held", "followers.reached", "followers.open_all", "followers.open_each", "followers.delivery",
            "followers.service_rss", "followers.rss_per_follower", "followers.threads", "followers.open_fds", "followers.cpu_held",
            "egress.mib_s.direct", "egress.mib_s.proxy", "egress.mib_s_ratio", "egress.ttfb.direct", "egress.ttfb.proxy",
            "egress.ttfb_overhead",
            "blob.upload.local.mbps", "blob.restore.local.mbps", "blob.upload-again.local.mbps",
            "blob.upload.s3.mbps", "blob.restore.s3.mbps", "blob.upload-again.s3.mbps",
            "blob.dedup.second-checkpoint-percent", "blob.dedup.incremental-send-percent", "blob.dedup.durable-checkpoint-percent",
            "blob.durable.upload.local.ms", "blob.durable.upload.local.mbps", "blob.durable.restore.local.ms",
            "blob.durable.restore.local.mbps", "blob.durable.restore-call.local.ms",
            "blob.durable.upload.s3.ms", "blob.durable.upload.s3.mbps", "blob.durable.restore.s3.ms",
            "blob.durable.restore.s3.mbps", "blob.durable.restore-call.s3.ms", "blob.durable.restore.s3-vs-local");
    /** The chunk sizes compared: dedup, and upload and restore on each backend (S3 also with more chunks at once). */
    private static final List<String> CHUNK_SIZES = Stream.concat(
            ChunkSize.COMPARED.stream().flatMap(c -> Stream.of("blob.dedup.second-checkpoint-percent",
                    "blob.upload.local.mbps", "blob.restore.local.mbps", "blob.upload.s3.mbps", "blob.restore.s3.mbps").map(f -> f + c.suffix())),
            Stream.of("blob.upload.s3.mbps", "blob.restore.s3.mbps")
                    .map(f -> f + ChunkSize.ofDefault().suffix() + ".concurrency-" + BlobThroughput.MORE_CONCURRENCY)).toList();
    /** The preview scenario's figures, per server; latency samples and throughput rounds are several even at this scale. */
    private static final List<String> PREVIEW = Stream.of("busybox", "python")
            .flatMap(server -> Stream.of("latency.direct", "latency.preview", "latency_overhead", "rps.direct",
                    "rps.preview", "rps_ratio", "mib_s.direct", "mib_s.preview", "mib_s_ratio").map(f -> "preview." + server + "." + f))
            .toList();

    /** The scenarios that time whole processes (run from the checkout's jars, as failsafe does). */
    private static final List<String> WHOLE_PROCESSES = Stream.concat(
            Stream.of("cli.first_call", "cli.list", "cli.exec_true", "cli.list_own_jvm", "cli.exec_true_own_jvm",
                    "floor.java_version", "service_start", "service_start.no_warm_up", "seed.resume_to_answer", "seed.resume_call", "seed.repl_reply"),
            Stream.of("create", "exec", "file_write", "file_read", "file_list", "get", "list", "pause", "resume",
                    "hibernate", "resume_hibernated", "checkpoint_memory", "fork", "delete")
                    .flatMap(kind -> Stream.of("first_call." + kind, "first_call.no_warm_up." + kind))).toList();

    @Test
    void aTinyRunMeasuresEveryScenarioAndLeavesNothingBehind(@TempDir Path dir) throws Exception {
        Path json = dir.resolve("results.json");
        var report = Benchmark.run(Options.parse("--iterations-scale", "0.01", "--max-size", "100M", "--output-size", "10M",
                "--blob-root-size", "32M", "--blob-data-size", "16M", "--json", json.toString()));
        ResultJson.write(report, json);

        assertThat(report.errors()).as("failed scenarios or leftovers").isEmpty();
        JsonNode root = new ObjectMapper().readTree(Files.readString(json));
        assertThat(root.path("machine").path("cores").asInt()).isPositive();
        assertThat(root.path("machine").path("loadAverageAtStart").size()).isEqualTo(3);
        assertThat(root.path("percentileMethod").asText()).contains("nearest-rank");

        Map<String, JsonNode> figures = new HashMap<>();
        root.path("figures").forEach(f -> figures.put(f.path("name").asText(), f));
        var expected = new ArrayList<>(EXPECTED);
        expected.addAll(PREVIEW);
        expected.addAll(CHUNK_SIZES);
        if (Checkout.ofRunningJar().isPresent()) expected.addAll(WHOLE_PROCESSES);
        else assertThat(root.path("details").path("cli").path("skipped").asText()).contains("checkout");
        JsonNode watchSkipped = root.path("details").path("file-watch").path("skipped");
        if (watchSkipped.isMissingNode()) expected.addAll(FILE_WATCH);
        else assertThat(watchSkipped.asText()).contains("route not available");
        assertThat(figures.keySet()).containsExactlyInAnyOrderElementsOf(expected);
        for (String name : expected) {
            JsonNode f = figures.get(name);
            assertThat(f.path("n").asInt()).as(name + " n").isBetween(1, PER_FOLLOWER.contains(name) || PREVIEW.contains(name) ? 10 : 3);
            for (String field : List.of("p50", "p90", "p95", "p99", "min", "max")) {
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
        assertThat(figures.get("followers.held").path("p50").asInt()).as("every follower held").isEqualTo(10);
        assertThat(figures.get("followers.reached").path("p50").asInt()).as("the line reached every follower").isEqualTo(10);
        assertThat(root.path("details").path("followers").path("endedWithTheirProcess").asInt()).isEqualTo(10);
        assertThat(root.path("details").path("output").path("bytesPerStream").asLong()).isEqualTo(10L << 20);
        JsonNode dedup = root.path("details").path("blob-dedup");
        assertThat(dedup.path("smallRoot").asText()).as("the quick run says its root is small").contains("32 MiB");
        assertThat(dedup.path("root").path("bytes").asLong()).isEqualTo(32L << 20);
        assertThat(figures.get("blob.dedup.second-checkpoint-percent").path("p50").asDouble()).as("the second checkpoint shares chunks")
                .isLessThan(50);
        assertThat(figures.get("blob.dedup.second-checkpoint-percent").path("target").path("met").isBoolean()).isTrue();
        assertThat(root.path("details").path("blob-throughput").path("dataBytes").asLong()).isEqualTo(16L << 20);
        assertThat(root.path("details").path("blob-throughput").path("smallData").asText()).contains("16 MiB");
        assertThat(figures.get("blob.dedup.durable-checkpoint-percent").path("p50").asDouble()).as("the second durable checkpoint is "
                + "incremental").isLessThan(50);
        JsonNode restore = root.path("details").path("blob-restore");
        assertThat(restore.path("smallMemory").asText()).as("the quick run says its memory is small").contains("100 MiB");
        assertThat(restore.path("s3Upload").path("residentBytes").asLong()).as("the allocation is resident").isGreaterThan(95L << 20);
        assertThat(ResultTable.render(report)).contains("create_first_output.tiny", "floor.runc_exec_true", "blob.upload.s3.mbps");
    }
}
