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
 * forks, so the exec ratio may well be below 1).
 */
final class FloorLinks {
    static final Map<String, List<String>> FLOORS = Map.of(
            "create_first_output.tiny", List.of("floor.btrfs_snapshot.tiny", "floor.runc_run.tiny"),
            "create_first_output.base", List.of("floor.btrfs_snapshot.base", "floor.runc_run.base"),
            "create_call.tiny", List.of("floor.btrfs_snapshot.tiny", "floor.runc_run.tiny"),
            "create_call.base", List.of("floor.btrfs_snapshot.base", "floor.runc_run.base"),
            "exec_true", List.of("floor.runc_exec_true"));

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
        List<String> parts = FLOORS.get(figure.name());
        if (parts == null || !parts.stream().allMatch(byName::containsKey)) return Optional.empty();
        double p50 = parts.stream().mapToDouble(p -> byName.get(p).stats().p50()).sum();
        return Optional.of(new Floor(parts, p50, figure.stats().p50() / p50));
    }
}
