package io.stasis.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Which raw floors lie under which figure. A create pays a snapshot and a {@code runc run}; an
 * exec pays what {@code runc exec} pays (and more: runc exec starts a whole runc, stasis-init only
 * forks, so the exec ratio may well be below 1). A pause pays the freezer write, a hibernate and its
 * resume a CRIU dump and restore of the same memory, a files checkpoint a read-only snapshot of the
 * root, a fork from it a writable snapshot of that and a {@code runc run}, a fork from a memory
 * checkpoint a snapshot and a CRIU restore. An output stream cannot outrun the process writing
 * the output into its file (a throughput: there the ratio is a fraction of the floor's rate).
 */
final class FloorLinks {
    static final Map<String, List<String>> FLOORS = Map.ofEntries(
            Map.entry("create_first_output.tiny", List.of("floor.btrfs_snapshot.tiny", "floor.runc_run.tiny")),
            Map.entry("create_first_output.base", List.of("floor.btrfs_snapshot.base", "floor.runc_run.base")),
            Map.entry("create_call.tiny", List.of("floor.btrfs_snapshot.tiny", "floor.runc_run.tiny")),
            Map.entry("create_call.base", List.of("floor.btrfs_snapshot.base", "floor.runc_run.base")),
            Map.entry("exec_true", List.of("floor.runc_exec_true")),
            Map.entry("cli.list", List.of("floor.java_version")),
            Map.entry("cli.exec_true", List.of("floor.java_version")),
            Map.entry("cli.first_call", List.of("floor.java_version")),
            Map.entry("cli.list_own_jvm", List.of("floor.java_version")),
            Map.entry("cli.exec_true_own_jvm", List.of("floor.java_version")),
            Map.entry("pause_call", List.of("floor.freezer_freeze")),
            Map.entry("resume_call", List.of("floor.freezer_thaw")),
            Map.entry("fork10_memory_per_sandbox", List.of("floor.btrfs_snapshot.tiny", "floor.criu_restore.fork_tiny")),
            Map.entry("fork1_memory_call", List.of("floor.btrfs_snapshot.tiny", "floor.criu_restore.fork_tiny")),
            Map.entry("output_stream.follow", List.of("floor.output_write")),
            Map.entry("output_stream.exec", List.of("floor.output_write")),
            Map.entry("output_stream.exec_sdk", List.of("floor.output_write")),
            Map.entry("template_build.cold", List.of("floor.template_steps_by_hand")),
            Map.entry("template_build.warm", List.of("floor.template_steps_by_hand")),
            Map.entry("nodes.exec_forwarded", List.of("floor.nodes_exec_owner")),
            Map.entry("nodes.get_forwarded", List.of("floor.nodes_get_owner")),
            Map.entry("nodes.create_postgresql", List.of("floor.nodes_create_sqlite")),
            // Through another node, against through the node it is made on: what placing and passing on add.
            Map.entry("nodes.create_forwarded", List.of("nodes.create_postgresql")),
            Map.entry("e2b.create", List.of("floor.e2b_create_java")),
            Map.entry("e2b.run", List.of("floor.e2b_run_java")),
            Map.entry("e2b.pause_connect", List.of("floor.e2b_pause_connect_java")),
            Map.entry("nodes.loss_to_answer", List.of("floor.nodes_lease_and_grace")));

    /** Floors of the figures measured per size; the size suffix of the figure carries over to its floors. */
    static final Map<String, List<String>> FLOORS_PER_SIZE = Map.of(
            "hibernate_call", List.of("floor.criu_dump"),
            "hibernate_resume_call", List.of("floor.criu_restore"),
            "checkpoint_files_call", List.of("floor.btrfs_snapshot_ro"),
            // A warm sandbox given the branch as its root: no container starts (see SandboxRuntime#reroot).
            "fork_files_call", List.of("floor.btrfs_branch"));

    private FloorLinks() {
    }

    /** The figures, each with its floor attached when all the floor's parts were measured. */
    static List<Figure> apply(List<Figure> figures) {
        Map<String, Figure> byName = figures.stream().collect(Collectors.toMap(Figure::name, Function.identity(), (a, b) -> a));
        var out = new ArrayList<Figure>();
        for (Figure figure : figures) out.add(floorOf(figure, byName).map(figure::withFloor).orElse(figure));
        return out;
    }

    private static Optional<Floor> floorOf(Figure figure, Map<String, Figure> byName) {
        List<String> parts = partsOf(figure.name());
        if (parts.isEmpty() || !parts.stream().allMatch(byName::containsKey)) return Optional.empty();
        double p50 = parts.stream().mapToDouble(p -> byName.get(p).stats().p50()).sum();
        return Optional.of(new Floor(parts, p50, figure.stats().p50() / p50));
    }

    /** The floor figures under a figure, e.g. {@code hibernate_call.1GB} -> {@code floor.criu_dump.1GB}; empty if none. */
    static List<String> partsOf(String figure) {
        List<String> fixed = FLOORS.get(figure);
        if (fixed != null) return fixed;
        int dot = figure.indexOf('.');
        if (dot < 0) return List.of();
        List<String> perSize = FLOORS_PER_SIZE.get(figure.substring(0, dot));
        if (perSize == null) return List.of();
        String size = figure.substring(dot); // ".1GB"
        // A part that already names its variant (floor.runc_run.tiny) is shared by every size.
        return perSize.stream().map(p -> p.chars().filter(c -> c == '.').count() >= 2 ? p : p + size).toList();
    }
}
