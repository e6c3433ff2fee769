package io.stasis.storage.btrfs;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link Lineage} files of a pool's roots and snapshots, and those not yet written. A snapshot
 * or a fork must succeed on a full pool (it needs no room there), but its lineage file does: one
 * that cannot be written is kept here, used as if written, and written by {@link #writePending}
 * (each charge pass) once there is room. Only a service that dies before then loses it, and the
 * subvolume is then taken as descending from nothing.
 */
final class Lineages {
    private static final Logger log = LoggerFactory.getLogger(BtrfsRootStore.class); // the store's logger, as operators know it

    private final Qgroups qgroups;
    private final Map<Path, Lineage> pending = new ConcurrentHashMap<>();

    Lineages(Qgroups qgroups) {
        this.qgroups = qgroups;
    }

    /** What {@code subvolume} descends from: its lineage, or (none recorded) itself alone. */
    Lineage of(Path subvolume) {
        var waiting = pending.get(subvolume);
        if (waiting != null) return waiting;
        return Lineage.read(subvolume).orElseGet(() -> Lineage.of(qgroups.subvolumeId(subvolume)));
    }

    /** Records that {@code subvolume}, just made, was branched from {@code source}. */
    void recordBranch(Path source, Path subvolume) {
        var lineage = of(source).branch(qgroups.subvolumeId(subvolume));
        try {
            lineage.writeFor(subvolume);
        } catch (IOException e) {
            pending.put(subvolume, lineage);
            log.atWarn().addKeyValue("subvolume", subvolume).addKeyValue("reason", e.toString())
                    .log("lineage kept in memory until the pool has room to write it");
        }
    }

    /** {@code from}'s lineage is now {@code to}'s (a rename of the subvolume). */
    void move(Path from, Path to) throws IOException {
        var waiting = pending.remove(from);
        if (waiting != null) pending.put(to, waiting);
        Lineage.move(from, to);
    }

    void delete(Path subvolume) throws IOException {
        pending.remove(subvolume);
        Lineage.deleteFor(subvolume);
    }

    boolean anyPending() {
        return !pending.isEmpty();
    }

    /** Writes the lineages kept in memory, of the subvolumes still there, where there is room now. */
    void writePending() {
        for (var entry : pending.entrySet()) {
            if (!Subvolumes.isSubvolume(entry.getKey())) {
                pending.remove(entry.getKey(), entry.getValue());
                continue;
            }
            try {
                entry.getValue().writeFor(entry.getKey());
                pending.remove(entry.getKey(), entry.getValue());
            } catch (IOException e) {
                log.atDebug().addKeyValue("subvolume", entry.getKey()).addKeyValue("reason", e.toString()).log("lineage still not written");
            }
        }
    }
}
