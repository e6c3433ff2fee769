package io.stasis.storage.btrfs;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.LongPredicate;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Charges what a deleted root wrote, and something still holds, to one live root: its <b>heir</b>.
 *
 * <p>Under simple quotas an extent is charged to the subvolume that wrote it, for as long as it
 * exists. When a root is deleted, btrfs keeps its group ({@code 0/<id>}, now "stale") charged with
 * what its checkpoints and the roots branched from them still hold, but that group has no limit
 * any sandbox answers for: without this, a chain of fork, delete the parent, write, fork again
 * would let a tenant keep more than the sum of its roots' limits. So each stale group is made a
 * member of a level 1 group {@code 1/<heir>}, with the heir's own group, and that group gets the
 * heir's limit: the heir's writes fail with {@code EDQUOT} once what it wrote and what it inherits
 * reach its limit.
 *
 * <p>The heir of a deleted subvolume is, among the live roots whose {@link Lineage} names it, the
 * nearest descendant (fewest branchings away), the oldest (lowest id) among equals: a root made
 * later never takes the charge from one that has it, and a fork's own forks inherit only once it
 * is gone. When the heir is deleted, its own group and what it carried pass on to its heir in turn.
 * A stale group no live root descends from (what only checkpoints hold) stays charged to nobody.
 * The heir pays for all that is left of the deleted root's writes, including what only a checkpoint
 * of it still holds: btrfs does not tell who holds which extent, and paying too much cannot let a
 * tenant exceed its limits.
 *
 * <p>Each {@link #settle} works out who should carry what from the subvolumes present and changes
 * the groups to match: idempotent, so a pass cut short (a crash, a subvolume deleted meanwhile)
 * is completed by the next. Groups are added before old memberships are removed: while a charge
 * moves, it counts twice, never zero times. Every level 1 group of the pool is this class's.
 */
final class InheritedCharges {
    private static final Logger log = LoggerFactory.getLogger(BtrfsRootStore.class); // the store's logger, as operators know it

    private final BtrfsPool pool;
    private final Qgroups qgroups;
    private final Lineages lineages;
    private final QgroupFigures figures;

    InheritedCharges(BtrfsPool pool, Qgroups qgroups, Lineages lineages, QgroupFigures figures) {
        this.pool = pool;
        this.qgroups = qgroups;
        this.lineages = lineages;
        this.figures = figures;
    }

    /**
     * A subvolume present in the pool.
     *
     * @param mayInherit a sandbox's root (not a checkpoint's snapshot, nor a root put aside by a replace)
     */
    record Present(Lineage lineage, boolean mayInherit) {
    }

    /** What a pass found and changed. */
    record Outcome(SortedMap<Long, SortedSet<Long>> heirs, int assigned, int removed, int destroyed) {
        boolean changed() {
            return assigned + removed + destroyed > 0;
        }
    }

    /**
     * Which deleted subvolumes each heir carries: for every subvolume named in a lineage but not
     * present, whose group {@code holdsData}, the heir as the class describes. Heirs carry at
     * least one.
     */
    static SortedMap<Long, SortedSet<Long>> heirs(Collection<Present> present, LongPredicate holdsData) {
        var live = new HashSet<Long>();
        for (var p : present) live.add(p.lineage().self());
        Map<Long, long[]> best = new HashMap<>(); // deleted id -> {distance, heir}
        for (var p : present) {
            if (!p.mayInherit()) continue;
            var ids = p.lineage().ids();
            for (int distance = 1; distance < ids.size(); distance++) {
                long gone = ids.get(distance);
                if (live.contains(gone)) continue;
                long heir = p.lineage().self();
                long[] known = best.get(gone);
                if (known == null || distance < known[0] || (distance == known[0] && heir < known[1]))
                    best.put(gone, new long[] {distance, heir});
            }
        }
        var heirs = new TreeMap<Long, SortedSet<Long>>();
        best.forEach((gone, choice) -> {
            if (holdsData.test(gone)) heirs.computeIfAbsent(choice[1], h -> new TreeSet<>()).add(gone);
        });
        return heirs;
    }

    /** One pass: finds the heirs and makes the pool's level 1 groups say so. */
    Outcome settle() {
        Path top = pool.path();
        lineages.writePending();
        var heirs = heirs(present(), gone -> figures.used(Qgroup.ofSubvolume(gone)) > 0);
        Set<Qgroup> groups = figures.groups();
        var wanted = new HashSet<Qgroups.Membership>();
        int assigned = 0, removed = 0, destroyed = 0;
        for (var entry : heirs.entrySet()) {
            Qgroup own = Qgroup.ofSubvolume(entry.getKey());
            Qgroup group = Qgroup.aboveSubvolume(entry.getKey());
            if (!groups.contains(group)) qgroups.create(top, group);
            var members = new ArrayList<Qgroup>(List.of(own));
            entry.getValue().forEach(gone -> members.add(Qgroup.ofSubvolume(gone)));
            for (var member : members) wanted.add(new Qgroups.Membership(member, group));
            long limit = figures.limit(own);
            if (limit > 0 && figures.limit(group) != limit) qgroups.limit(top, group, limit);
        }
        var existing = new HashSet<Qgroups.Membership>();
        for (var m : qgroups.memberships(top)) if (m.parent().level() == 1) existing.add(m);
        for (var m : wanted) {
            if (existing.contains(m)) continue;
            qgroups.assign(top, m.member(), m.parent());
            assigned++;
        }
        for (var m : existing) {
            if (wanted.contains(m)) continue;
            qgroups.unassign(top, m.member(), m.parent());
            removed++;
        }
        for (var group : groups) {
            if (group.level() != 1 || heirs.containsKey(group.id())) continue;
            qgroups.destroy(top, group);
            destroyed++;
        }
        var outcome = new Outcome(heirs, assigned, removed, destroyed);
        if (outcome.changed())
            log.atInfo().addKeyValue("heirs", heirs).addKeyValue("assigned", assigned).addKeyValue("removed", removed)
                    .addKeyValue("destroyed", destroyed).log("charged what deleted roots wrote to the live roots that hold it");
        return outcome;
    }

    /** The heir's group follows its root's limit at once, not at the next pass. */
    void limitChanged(Path root, long bytes) {
        Qgroup group = Qgroup.aboveSubvolume(qgroups.subvolumeId(root));
        if (figures.has(group)) qgroups.limit(pool.path(), group, bytes);
    }

    /** The roots and checkpoints' snapshots in the pool, each with its lineage. */
    private List<Present> present() {
        var present = new ArrayList<Present>();
        for (Path root : subvolumesIn(pool.rootsDir())) {
            String name = root.getFileName().toString();
            if (!SandboxId.isValid(RootPaths.sandboxOf(name))) continue;
            lineageOf(root).ifPresent(l -> present.add(new Present(l, SandboxId.isValid(name))));
        }
        for (Path snapshot : subvolumesIn(pool.checkpointsDir())) {
            if (!CheckpointId.isValid(snapshot.getFileName().toString())) continue;
            lineageOf(snapshot).ifPresent(l -> present.add(new Present(l, false)));
        }
        return present;
    }

    /** Empty if it went meanwhile. */
    private Optional<Lineage> lineageOf(Path subvolume) {
        try {
            return Optional.of(lineages.of(subvolume));
        } catch (StasisException e) {
            if (Subvolumes.isSubvolume(subvolume)) throw e;
            return Optional.empty();
        }
    }

    private static List<Path> subvolumesIn(Path dir) {
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.filter(Subvolumes::isSubvolume).toList();
        } catch (IOException e) {
            throw StasisException.runtimeFailed(null, "list " + dir, e.toString(), e);
        }
    }
}
