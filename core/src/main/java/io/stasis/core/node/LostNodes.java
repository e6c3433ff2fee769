package io.stasis.core.node;

import io.stasis.core.checkpoint.Checkpoint;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.concurrent.Periodic;
import io.stasis.core.events.EventLog;
import io.stasis.core.network.NetworkService;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.spi.Catalog;
import io.stasis.core.spi.RootStore;
import io.stasis.core.spi.RuntimeImages;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings back the sandboxes of a node that is gone, or being drained: once a node's lease has
 * lapsed for longer than a grace period (or at once, for a node being drained), each of its
 * sandboxes whose live state is durable (hibernated, with its image in the shared durable store)
 * becomes this node's, and resumes here on its next request from that image (files, memory and
 * processes as they were hibernated).
 *
 * <p>The rest stay the lost node's and answer {@code node_unavailable} until it is back: their
 * processes, or their only copy, are on its host. A node that comes back finds the sandboxes adopted
 * meanwhile no longer its own, and its reconciler removes what it held of them.
 *
 * <p>Several nodes may sweep at once: the catalog moves each sandbox for one of them only. A
 * sandbox with an operation pending (a hibernation the node died in) is left as it is.
 *
 * <p>Each sweep also lets go of what this node still holds of its sandboxes another node took (a
 * drained node's roots and hibernation images): they are that node's now.
 */
public final class LostNodes implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(LostNodes.class);

    private final Catalog catalog;
    private final RootStore roots;
    private final RuntimeImages images;
    private final NetworkService network;
    private final EventLog events;
    private final Clock clock;
    private final Duration grace;
    private final Duration period;
    private volatile boolean closed;
    private Periodic sweeper;

    /**
     * @param grace  how long after a node's lease lapsed its sandboxes are adopted (a node that only
     *               paused, or lost the catalog for a moment, renews within it)
     * @param period how often the nodes are looked at
     */
    public LostNodes(Catalog catalog, RootStore roots, RuntimeImages images, NetworkService network, EventLog events, Clock clock,
                     Duration grace, Duration period) {
        this.catalog = catalog;
        this.roots = roots;
        this.images = images;
        this.network = network;
        this.events = events;
        this.clock = clock;
        this.grace = grace;
        this.period = period;
    }

    public void start() {
        sweeper = Periodic.start("lost-nodes", period, Duration.ofSeconds(10), () -> {
            sweep();
            releaseTaken();
        });
    }

    /** One pass; returns how many sandboxes this node adopted. */
    public int sweep() {
        Instant now = clock.instant();
        int adopted = 0;
        for (Node node : catalog.nodes()) {
            if (node.name().equals(catalog.localNode())) continue;
            if (!node.draining() && !node.lost(now, grace)) continue;
            // What its operations in flight held is free again: they ended with it (a drained node's go on).
            if (!node.draining() && catalog.releaseHoldsOf(node.name()) > 0)
                log.atInfo().addKeyValue("node", node.name()).log("released the quota holds of a lost node");
            for (SandboxId id : catalog.sandboxesOfNode(node.name())) {
                if (closed) return adopted;
                var sandbox = catalog.find(id);
                if (sandbox.isEmpty()) continue;
                if (durable(sandbox.get()) && adopt(sandbox.get(), node, Optional.empty())) adopted++;
                else if (!node.draining()) {
                    var at = durabilityPoint(sandbox.get());
                    if (at.isPresent() && adopt(sandbox.get(), node, at)) adopted++;
                }
            }
        }
        return adopted;
    }

    /**
     * Removes the roots, snapshots and images this node holds of sandboxes and checkpoints the
     * catalog places on another node; returns how many. Only what the catalog records elsewhere: a
     * sandbox being created here has no record yet, and stays.
     */
    public int releaseTaken() {
        String self = catalog.localNode();
        // What the catalog lists as this node's is kept without a query each; only the rest is looked up.
        Set<SandboxId> mine = catalog.all().stream().map(Sandbox::id).collect(Collectors.toSet());
        Set<CheckpointId> mineCheckpoints = catalog.allCheckpoints().stream().map(Checkpoint::id).collect(Collectors.toSet());
        int removed = 0;
        for (SandboxId id : roots.listRoots()) {
            if (mine.contains(id) || catalog.nodeOf(id).filter(node -> !node.equals(self)).isEmpty()) continue;
            roots.deleteRoot(id);
            removed++;
        }
        for (CheckpointId id : images.listImages()) {
            if (mineCheckpoints.contains(id) || catalog.nodeOfCheckpoint(id).filter(node -> !node.equals(self)).isEmpty()) continue;
            images.deleteImage(id);
            removed++;
        }
        for (CheckpointId id : roots.listSnapshots()) {
            if (mineCheckpoints.contains(id) || catalog.nodeOfCheckpoint(id).filter(node -> !node.equals(self)).isEmpty()) continue;
            roots.deleteSnapshot(id);
            removed++;
        }
        if (removed > 0) log.atInfo().addKeyValue("removed", removed).log("let go of what other nodes took");
        return removed;
    }

    /** Hibernated, with the durable copy of that very image recorded. */
    private boolean durable(Sandbox sandbox) {
        return sandbox.state() instanceof SandboxState.Hibernated h
                && catalog.durableImage(sandbox.id()).filter(image -> image.checkpoint().equals(h.checkpoint())).isPresent();
    }

    /**
     * For a sandbox that had processes on the lost node and keeps durability checkpoints: its record
     * hibernated at the newest of them, when that is its newest durable copy, with memory.
     */
    private Optional<Sandbox> durabilityPoint(Sandbox sandbox) {
        if (!sandbox.state().hasProcesses() || sandbox.lifecycle().checkpointEvery().isEmpty()) return Optional.empty();
        return catalog.durableImage(sandbox.id()).flatMap(image -> catalog.findCheckpoint(image.checkpoint()))
                .filter(c -> c.purpose() == Checkpoint.Purpose.DURABILITY && c.memory())
                .map(c -> sandbox.withState(new SandboxState.Hibernated(c.id(), c.sizeBytes(), c.createdAt())));
    }

    private boolean adopt(Sandbox sandbox, Node from, Optional<Sandbox> asHibernated) {
        boolean adopted = network.rehome(sandbox.id(), slot -> catalog.adoptSandbox(sandbox.id(), from.name(), slot, asHibernated));
        if (!adopted) return false;
        var details = new LinkedHashMap<String, Object>();
        details.put("sandboxId", sandbox.id().value());
        details.put("from", from.name());
        details.put("to", catalog.localNode());
        details.put("leaseUntil", from.leaseUntil().toString());
        asHibernated.ifPresent(s -> details.put("checkpointId", ((SandboxState.Hibernated) s.state()).checkpoint().value()));
        events.append("node.adopted", Optional.of(sandbox.id()), details);
        log.atInfo().addKeyValue("sandbox", sandbox.id()).addKeyValue("from", from.name()).addKeyValue("leaseUntil", from.leaseUntil())
                .addKeyValue("fromCheckpoint", asHibernated.isPresent())
                .log("adopted a sandbox of a lost node: it resumes here from its durable image");
        return true;
    }

    /** Stops sweeping, and lets go once more of what others took: a drained node that stops holds nothing of theirs. */
    @Override
    public void close() {
        closed = true;
        if (sweeper != null) sweeper.close();
        try {
            releaseTaken();
        } catch (RuntimeException e) {
            log.atWarn().setCause(e).log("letting go of what other nodes took failed; the next start does it");
        }
    }
}
