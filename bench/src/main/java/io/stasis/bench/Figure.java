package io.stasis.bench;

import java.util.Optional;

/**
 * One measured figure: a row of the table and an entry of the JSON.
 *
 * @param name        stable identifier, e.g. {@code create_first_output.tiny}
 * @param scenario    the scenario that measured it ({@code --only} name)
 * @param unit        {@code ms}, {@code MB/s} or {@code MB}
 * @param description what exactly was measured
 * @param stats       its samples summarised
 * @param target      the goal the issue sets, if any
 * @param floor       the raw floor it is compared with, once linked
 */
public record Figure(String name, String scenario, String unit, String description, Stats stats,
                     Optional<Target> target, Optional<Floor> floor) {

    public static Figure of(String name, String scenario, String unit, String description, Stats stats) {
        return new Figure(name, scenario, unit, description, stats, Optional.empty(), Optional.empty());
    }

    public Figure named(String other) {
        return new Figure(other, scenario, unit, description, stats, target, floor);
    }

    public Figure withTarget(Target goal) {
        return new Figure(name, scenario, unit, description, stats, Optional.of(goal), floor);
    }

    public Figure withFloor(Floor raw) {
        return new Figure(name, scenario, unit, description, stats, target, Optional.of(raw));
    }

    /** Empty when the figure has no target. */
    public Optional<Boolean> met() {
        return target.map(t -> t.metBy(stats));
    }
}
