package io.stasis.storage.btrfs;

import io.stasis.core.checkpoint.CheckpointId;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code btrfs send} tools running, by the snapshots they read (the sent one and its
 * parent): the kernel refuses to delete a subvolume while a send reads it, so a delete aborts
 * them first (the upload then fails, and what it stored is never named by a descriptor).
 */
final class RunningSends {
    private static final Logger log = LoggerFactory.getLogger(BtrfsRootStore.class); // the store's logger, as operators know it

    private final Map<CheckpointId, Set<Process>> sends = new ConcurrentHashMap<>();

    /** A send of {@code checkpoint} (from {@code parent}, if any) has started in {@code process}. */
    void started(Process process, CheckpointId checkpoint, Optional<CheckpointId> parent) {
        sends.computeIfAbsent(checkpoint, k -> ConcurrentHashMap.newKeySet()).add(process);
        parent.ifPresent(p -> sends.computeIfAbsent(p, k -> ConcurrentHashMap.newKeySet()).add(process));
    }

    /** The send in {@code process} is over. */
    void ended(Process process, CheckpointId checkpoint, Optional<CheckpointId> parent) {
        sends.computeIfPresent(checkpoint, (k, set) -> set.remove(process) && set.isEmpty() ? null : set);
        parent.ifPresent(p -> sends.computeIfPresent(p, (k, set) -> set.remove(process) && set.isEmpty() ? null : set));
    }

    /** Kills the sends reading {@code checkpoint}'s snapshot and waits for them to end. */
    void abort(CheckpointId checkpoint) {
        var running = sends.getOrDefault(checkpoint, Set.of());
        for (var process : Set.copyOf(running)) {
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            log.atInfo().addKeyValue("checkpoint", checkpoint).log("aborted a btrfs send to delete the snapshot it read");
        }
    }
}
