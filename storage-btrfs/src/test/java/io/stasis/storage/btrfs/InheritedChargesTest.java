package io.stasis.storage.btrfs;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.storage.btrfs.InheritedCharges.Present;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/** Who inherits what, worked out from lineages alone: the rules {@link InheritedCharges} applies to the pool. */
class InheritedChargesTest {
    private static Present root(long... ids) {
        return present(true, ids);
    }

    private static Present snapshot(long... ids) {
        return present(false, ids);
    }

    private static Present present(boolean mayInherit, long... ids) {
        var list = new ArrayList<Long>();
        for (long id : ids) list.add(id);
        return new Present(new Lineage(list), mayInherit);
    }

    @Test
    void aDeletedRootIsInheritedByTheOldestOfItsNearestLiveForks() {
        // Root 10 (deleted) had checkpoint 11; forks 12 and 14 came from it, 13 is a checkpoint of 12, 15 a fork of 13.
        var present = List.of(snapshot(11, 10), root(12, 11, 10), snapshot(13, 12, 11, 10), root(14, 11, 10), root(15, 13, 12, 11, 10));
        assertThat(InheritedCharges.heirs(present, id -> true)).isEqualTo(Map.of(12L, new TreeSet<>(Set.of(10L))));
        // Fork 12 deleted too: 14 is nearer to 10 than 15 is, and 15 is the only one left that descends from 12.
        var without12 = List.of(snapshot(11, 10), snapshot(13, 12, 11, 10), root(14, 11, 10), root(15, 13, 12, 11, 10));
        assertThat(InheritedCharges.heirs(without12, id -> true))
                .isEqualTo(Map.of(14L, new TreeSet<>(Set.of(10L)), 15L, new TreeSet<>(Set.of(12L))));
    }

    @Test
    void whatNoLiveRootDescendsFromOrWhatHoldsNothingIsInheritedByNobody() {
        // Only a checkpoint holds what 10 wrote; 20's parent 19 holds nothing any more; a replaced root and a snapshot never inherit.
        var present = List.of(snapshot(11, 10), root(21, 20, 19), present(false, 22, 11, 10));
        assertThat(InheritedCharges.heirs(present, id -> id != 19)).isEqualTo(Map.of(21L, new TreeSet<>(Set.of(20L))));
        assertThat(InheritedCharges.heirs(List.of(root(5)), id -> true)).isEmpty();
    }

    @Test
    void aRestoredRootInheritsTheRootItReplaced() {
        // Sandbox root 30 checkpointed as 31, restored: root 32 from 31, and 30 put aside (present, not an heir) until deleted.
        assertThat(InheritedCharges.heirs(List.of(present(false, 30), snapshot(31, 30), root(32, 31, 30)), id -> true)).isEmpty();
        assertThat(InheritedCharges.heirs(List.of(snapshot(31, 30), root(32, 31, 30)), id -> true))
                .isEqualTo(Map.of(32L, new TreeSet<>(Set.of(30L))));
    }

    /** Forests of random forks: each deleted subvolume a live root descends from has exactly one heir, the nearest, then the oldest. */
    @Property
    void everyDeletedAncestorWithALiveDescendantHasExactlyOneHeirTheNearest(@ForAll @Size(min = 1, max = 40) List<@IntRange(min = 0, max = 39) Integer> parents,
                                                                           @ForAll @Size(max = 40) Set<@IntRange(min = 0, max = 39) Integer> deleted) {
        // Subvolume i+1 is branched from subvolume parents[i] + 1 if that is older, else made from a template.
        var lineages = new ArrayList<Lineage>();
        for (int i = 0; i < parents.size(); i++) {
            int parent = parents.get(i);
            lineages.add(parent < i ? lineages.get(parent).branch(i + 1) : Lineage.of(i + 1));
        }
        var present = new ArrayList<Present>();
        var gone = new HashSet<Long>();
        for (int i = 0; i < lineages.size(); i++) {
            if (deleted.contains(i)) gone.add((long) i + 1);
            else present.add(new Present(lineages.get(i), i % 3 != 2)); // every third a checkpoint's snapshot
        }
        var heirs = InheritedCharges.heirs(present, id -> true);
        var inherited = new HashSet<Long>();
        heirs.values().forEach(set -> set.forEach(id -> assertThat(inherited.add(id)).as("inherited once: " + id).isTrue()));
        for (long id : gone) {
            var candidates = present.stream().filter(Present::mayInherit).filter(p -> p.lineage().distanceTo(id) > 0).toList();
            if (candidates.isEmpty()) {
                assertThat(inherited).doesNotContain(id);
                continue;
            }
            int nearest = candidates.stream().mapToInt(p -> p.lineage().distanceTo(id)).min().orElseThrow();
            long heir = candidates.stream().filter(p -> p.lineage().distanceTo(id) == nearest).mapToLong(p -> p.lineage().self()).min().orElseThrow();
            assertThat(heirs.get(heir)).as("heir of " + id).contains(id);
        }
        assertThat(inherited).isSubsetOf(gone);
    }
}
