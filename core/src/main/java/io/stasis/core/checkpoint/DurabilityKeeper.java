package io.stasis.core.checkpoint;

import io.stasis.core.concurrent.Periodic;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.spi.Catalog;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps this node's running sandboxes restorable elsewhere, as their policy asks
 * ({@code checkpointEvery}, the API's {@code durability}): once a running sandbox's newest
 * durability checkpoint is that old, or it has none, it takes another one, with memory, into the
 * durable store ({@link CheckpointService#keepDurable}). If the node is lost, another node resumes
 * the sandbox from it (see {@code LostNodes}): files, memory and processes as of that checkpoint.
 *
 * <p>A paused or standby sandbox keeps the one it has (taken at most a period before it stopped
 * running): a new dump would bring a standby sandbox's memory back from swap for nothing new. A
 * hibernated one is durable by its hibernation (with durable hibernation). It also remembers which
 * sandboxes it keeps durable, for {@link #kept} (what a node cut off from the catalog freezes).
 */
public final class DurabilityKeeper implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DurabilityKeeper.class);

    private final Catalog catalog;
    private final CheckpointService checkpoints;
    private final Clock clock;
    private final Duration period;
    private final Set<SandboxId> kept = ConcurrentHashMap.newKeySet();
    private final Map<SandboxId, Instant> failedAt = new ConcurrentHashMap<>();
    private volatile boolean closed;
    private Periodic keeper;

    /** @param period how often the sandboxes are looked at */
    public DurabilityKeeper(Catalog catalog, CheckpointService checkpoints, Clock clock, Duration period) {
        this.catalog = catalog;
        this.checkpoints = checkpoints;
        this.clock = clock;
        this.period = period;
    }

    public void start() {
        keeper = Periodic.start("durability-keeper", period, Duration.ofSeconds(30), this::keepUp);
    }

    /** One pass over this node's sandboxes; returns how many durability checkpoints it took. */
    public int keepUp() {
        Instant now = clock.instant();
        int taken = 0;
        var seen = new HashSet<SandboxId>();
        var sandboxes = catalog.all();
        for (Sandbox sandbox : sandboxes) {
            if (closed) break;
            var every = sandbox.lifecycle().checkpointEvery();
            if (every.isEmpty() || !(sandbox.state() instanceof SandboxState.Running)) continue;
            var newest = newestDurability(sandbox.id());
            if (newest.isPresent()) seen.add(sandbox.id());
            if (newest.isPresent() && newest.get().createdAt().plus(every.get()).isAfter(now)) continue;
            var failed = failedAt.get(sandbox.id());
            if (failed != null && failed.plus(every.get()).isAfter(now)) continue; // one try a period, not one a second
            try {
                checkpoints.keepDurable(sandbox.id());
                failedAt.remove(sandbox.id());
                seen.add(sandbox.id());
                taken++;
            } catch (StasisException e) {
                failedAt.put(sandbox.id(), now);
                log.atWarn().addKeyValue("sandbox", sandbox.id()).addKeyValue("code", e.code().wireName()).addKeyValue("problem", e.getMessage())
                        .log("cannot take a durability checkpoint; trying again in a period");
            }
        }
        kept.retainAll(seen);
        failedAt.keySet().retainAll(sandboxes.stream().map(Sandbox::id).toList());
        kept.addAll(seen);
        return taken;
    }

    /** The running sandboxes this node keeps durable, as of its last pass: those another node may resume if this one is lost. */
    public Set<SandboxId> kept() {
        return Set.copyOf(kept);
    }

    private Optional<Checkpoint> newestDurability(SandboxId sandbox) {
        return catalog.checkpointsOf(sandbox).stream().filter(c -> c.purpose() == Checkpoint.Purpose.DURABILITY)
                .max(Comparator.comparing(Checkpoint::createdAt));
    }

    @Override
    public void close() {
        closed = true;
        if (keeper != null) keeper.close();
    }
}
