package io.stasis.core.node;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.spi.Catalog;
import io.stasis.core.volume.VolumeId;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This node among the nodes sharing the catalog: it registers at start, renews its lease every
 * third of it (with its capacity), and tells where a sandbox is. At close it gives its lease up, so
 * the others see it gone at once rather than when the lease lapses.
 */
public final class NodeService implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(NodeService.class);

    private final Catalog catalog;
    private final Clock clock;
    private final Supplier<URI> advertiseUrl;
    private final Supplier<NodeCapacity> capacity;
    private final Duration lease;
    private final boolean shared;
    private final Instant startedAt;
    private volatile boolean closed;
    private volatile boolean draining;
    private Thread renewer;

    /**
     * @param advertiseUrl read at {@link #start}, when the service knows the port it listens on
     * @param shared       whether other nodes may share the catalog (PostgreSQL), not this node's alone (SQLite)
     */
    public NodeService(Catalog catalog, Clock clock, Supplier<URI> advertiseUrl, Supplier<NodeCapacity> capacity, Duration lease,
                       boolean shared) {
        this.shared = shared;
        this.catalog = catalog;
        this.clock = clock;
        this.advertiseUrl = advertiseUrl;
        this.capacity = capacity;
        this.lease = lease;
        this.startedAt = clock.instant();
    }

    /** Whether this node is being drained (see {@link NodeDrain}): it places no new sandboxes, and hands its own over. */
    public boolean draining() {
        return draining;
    }

    /** Runs {@code drain} (or an undrain) with this node marked as it will be: draining from its start, or no longer. */
    public <T> T whileMarked(boolean drain, Supplier<T> change) {
        draining = drain;
        return change.get();
    }

    /** Whether a sandbox of this draining node is handed over already: hibernated, for another node to take. */
    public boolean handedOver(SandboxId sandbox) {
        return catalog.find(sandbox).map(s -> s.state() instanceof SandboxState.Hibernated).orElse(false);
    }

    /** The node that should take a new sandbox instead of this draining one: the live, not draining other node with the fewest. */
    public Optional<Node> elsewhereForNew() {
        return list().stream().filter(s -> s.alive() && !s.local() && !s.node().draining())
                .min(Comparator.comparingInt(NodeStatus::sandboxes)).map(NodeStatus::node);
    }

    /** Whether other nodes may share the catalog, so that what they record reaches this one only through it. */
    public boolean sharesCatalog() {
        return shared;
    }

    /** The node's name, as the catalog knows it. */
    public String name() {
        return catalog.localNode();
    }

    /** Registers this node and starts renewing its lease. */
    public void start() {
        register();
        renewer = Thread.ofVirtual().name("node-lease").start(this::renewUntilClosed);
        log.atInfo().addKeyValue("node", name()).addKeyValue("advertiseUrl", advertiseUrl.get()).addKeyValue("lease", lease).log("node registered");
    }

    private void register() {
        draining = false; // a registration ends a drain, as after a restart
        catalog.putNode(new Node(name(), advertiseUrl.get(), startedAt, clock.instant().plus(lease), capacity.get(), false));
    }

    private void renewUntilClosed() {
        long period = lease.toNanos() / 3;
        while (!closed) {
            LockSupport.parkNanos(period);
            if (closed) return;
            try {
                if (!catalog.renewNode(name(), clock.instant().plus(lease), capacity.get())) register();
            } catch (RuntimeException e) {
                log.atWarn().addKeyValue("node", name()).setCause(e).log("cannot renew the node's lease");
            }
        }
    }

    /** Every node with its liveness at this moment and its sandbox count, by name. */
    public List<NodeStatus> list() {
        Instant now = clock.instant();
        var counts = catalog.sandboxCountsByNode();
        return catalog.nodes().stream()
                .map(node -> new NodeStatus(node, node.alive(now), node.name().equals(name()), counts.getOrDefault(node.name(), 0)))
                .toList();
    }

    /** A node with what the caller sees of it now. */
    public record NodeStatus(Node node, boolean alive, boolean local, int sandboxes) {
    }

    /** Where a sandbox of another node is to be served, or empty when this node serves it (or it does not exist). */
    public Optional<Remote> remoteOf(SandboxId sandbox) {
        return remote(catalog.nodeOf(sandbox));
    }

    /** The same for a checkpoint, whose files are on its node's disk. */
    public Optional<Remote> remoteOf(CheckpointId checkpoint) {
        return remote(catalog.nodeOfCheckpoint(checkpoint));
    }

    /** The same for a volume. */
    public Optional<Remote> remoteOf(VolumeId volume) {
        return remote(catalog.nodeOfVolume(volume));
    }

    private Optional<Remote> remote(Optional<String> holder) {
        var owner = holder.filter(n -> !n.equals(name()));
        if (owner.isEmpty()) return Optional.empty();
        Instant now = clock.instant();
        var record = catalog.nodes().stream().filter(n -> n.name().equals(owner.get())).findFirst();
        return Optional.of(new Remote(owner.get(), record.filter(n -> n.alive(now))));
    }

    /** The node other than this one that a sandbox, checkpoint or volume is on, and its record while its lease holds (empty: it is gone). */
    public record Remote(String name, Optional<Node> alive) {
    }

    /** Stops renewing and gives the lease up, so the others see this node gone at once. */
    @Override
    public void close() {
        if (closed) return;
        closed = true;
        if (renewer != null) {
            LockSupport.unpark(renewer);
            try {
                renewer.join(Duration.ofSeconds(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        try {
            catalog.renewNode(name(), clock.instant(), capacity.get());
        } catch (RuntimeException e) {
            log.atWarn().addKeyValue("node", name()).setCause(e).log("cannot give the node's lease up");
        }
    }
}
