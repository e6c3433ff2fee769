package io.stasis.core.node;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.concurrent.Periodic;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.spi.Catalog;
import io.stasis.core.spi.NodeCatalog;
import io.stasis.core.tenant.TenantUsage;
import io.stasis.core.volume.VolumeId;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
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
    private static final Duration CLOSE_WAIT = Duration.ofSeconds(5);
    private static final Duration WATCH_PERIOD_MIN = Duration.ofMillis(50);

    private final Catalog catalog;
    private final Clock clock;
    private final Supplier<URI> advertiseUrl;
    private final Supplier<Optional<URI>> previewUrl;
    private final Supplier<NodeCapacity> capacity;
    private final Duration lease;
    private final boolean shared;
    private final Instant startedAt;
    private volatile boolean closed;
    private volatile boolean draining;
    /** When the lease was last renewed, by this process's monotonic clock (the catalog's times are other hosts' too). */
    private volatile long renewedAtNanos = System.nanoTime();
    private Periodic renewer;
    private Periodic watcher;
    /** Whether the watcher last saw the lease held (its listeners were told so). */
    private boolean watchedHeld = true;
    private final List<LeaseListener> listeners = new CopyOnWriteArrayList<>();

    /** Told when this node's lease lapses by its own clock (it could not renew it), and when a renewal succeeds again. */
    public interface LeaseListener {
        /** At the lapse, and again at every look while the lease stays lapsed: what it does must bear repeating. */
        void leaseLost();

        void leaseBack();
    }

    /**
     * @param advertiseUrl read at {@link #start}, when the service knows the port it listens on
     * @param previewUrl   where the others reach this node's preview listener, read at {@link #start} too
     * @param shared       whether other nodes may share the catalog (PostgreSQL), not this node's alone (SQLite)
     */
    public NodeService(Catalog catalog, Clock clock, Supplier<URI> advertiseUrl, Supplier<Optional<URI>> previewUrl,
                       Supplier<NodeCapacity> capacity, Duration lease, boolean shared) {
        this.previewUrl = previewUrl;
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

    /**
     * The node other than this one that a new sandbox asking for {@code demand} is to be created on,
     * or empty for this one. Of the live nodes not being drained, those whose limits take the demand
     * beside what they hold (their sandboxes and the holds in flight, see {@link NodeCatalog#nodeLoads})
     * are ranked by the memory they have left for sandboxes; this node wins a tie, so that a create is
     * forwarded only for a better place; among the others, the one with more free disk. If none has
     * room, this node: its admission then refuses with what is full. A draining node places nothing
     * on itself. Nodes named in {@code refused} (they answered full to this create already) are passed over.
     *
     * @throws StasisException {@code node_unavailable} on a draining node when no other node is alive
     */
    public Optional<Node> placeElsewhere(TenantUsage demand, Set<String> refused) {
        if (!shared && !draining) return Optional.empty(); // the only node
        Instant now = clock.instant();
        var loads = catalog.nodeLoads();
        var candidates = catalog.nodes().stream()
                .filter(n -> n.alive(now) && !n.draining() && !(draining && isLocal(n)) && !refused.contains(n.name())).toList();
        var best = candidates.stream().filter(n -> n.capacity().limits().fits(loads.getOrDefault(n.name(), TenantUsage.NONE), demand))
                .max(Comparator.<Node>comparingLong(n -> n.capacity().memoryForSandboxesMb() - loads.getOrDefault(n.name(), TenantUsage.NONE).memoryMb())
                        .thenComparing(this::isLocal)
                        .thenComparingLong(n -> n.capacity().diskFreeMb()));
        if (draining) {
            var elsewhere = best.or(() -> candidates.stream().findFirst()); // none with room: the one that will say so
            if (elsewhere.isEmpty())
                throw new StasisException(ErrorCode.NODE_UNAVAILABLE, "node " + name() + " is being drained and no other node is available"
                        + " to take new sandboxes", Map.of("node", name()));
            return elsewhere;
        }
        return best.filter(n -> !isLocal(n));
    }

    private boolean isLocal(Node node) {
        return node.name().equals(name());
    }

    /** Whether other nodes may share the catalog, so that what they record reaches this one only through it. */
    public boolean sharesCatalog() {
        return shared;
    }

    /** The node's name, as the catalog knows it. */
    public String name() {
        return catalog.localNode();
    }

    /** Adds a listener of this node's lease (on a shared catalog); add them before {@link #start}. */
    public void onLease(LeaseListener listener) {
        listeners.add(listener);
    }

    /** Registers this node and starts renewing its lease. */
    public void start() {
        register();
        renewer = Periodic.start("node-lease", lease.dividedBy(3), CLOSE_WAIT, this::renew);
        // Apart from the renewer, which may wait on an unreachable catalog for longer than the lease.
        if (shared && !listeners.isEmpty())
            watcher = Periodic.start("node-lease-watch", max(lease.dividedBy(20), WATCH_PERIOD_MIN), CLOSE_WAIT, this::watch);
        log.atInfo().addKeyValue("node", name()).addKeyValue("advertiseUrl", advertiseUrl.get()).addKeyValue("lease", lease).log("node registered");
    }

    private void register() {
        draining = false; // a registration ends a drain, as after a restart
        long asked = System.nanoTime();
        catalog.putNode(new Node(name(), advertiseUrl.get(), previewUrl.get(), startedAt, clock.instant().plus(lease), capacity.get(), false));
        renewedAtNanos = asked;
    }

    private void renew() {
        if (closed) return;
        try {
            long asked = System.nanoTime();
            if (catalog.renewNode(name(), clock.instant().plus(lease), capacity.get())) renewedAtNanos = asked;
            else register();
        } catch (RuntimeException e) {
            log.atWarn().addKeyValue("node", name()).setCause(e).log("cannot renew the node's lease");
        }
    }

    /** Tells the listeners when the lease is back, and every pass while it has lapsed. */
    private void watch() {
        if (closed) return;
        boolean now = leaseHeld();
        if (now == watchedHeld && now) return;
        if (now != watchedHeld)
            log.atWarn().addKeyValue("node", name()).addKeyValue("leaseHeld", now).log(now ? "the node's lease is renewed again"
                    : "the node could not renew its lease: it stops changing its sandboxes until it can");
        watchedHeld = now;
        for (var listener : listeners) {
            try {
                if (now) listener.leaseBack();
                else listener.leaseLost();
            } catch (RuntimeException e) {
                log.atWarn().addKeyValue("node", name()).setCause(e).log("a lease listener failed");
            }
        }
    }

    private static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }

    private boolean leaseHeld() {
        return System.nanoTime() - renewedAtNanos < lease.toNanos();
    }

    /**
     * Refuses to act while this node's lease has lapsed by its own clock: it could not renew it (the
     * catalog is out of its reach), so the other nodes may be adopting its sandboxes. The node changes
     * nothing until a renewal succeeds again; then the catalog tells which sandboxes are still its own.
     *
     * @throws StasisException {@code node_unavailable} naming the node and how long ago it last renewed
     */
    public void requireLease() {
        if (!shared || leaseHeld()) return;
        long since = System.nanoTime() - renewedAtNanos;
        throw new StasisException(ErrorCode.NODE_UNAVAILABLE, "node " + name() + " could not renew its lease in the catalog for "
                + Duration.ofNanos(since).toSeconds() + " s (the catalog is out of its reach): it changes nothing until it is back,"
                + " and the other nodes answer for the sandboxes they take over", Map.of("node", name()));
    }

    /** Every node with its liveness at this moment and its sandbox count, by name. */
    public List<NodeStatus> list() {
        Instant now = clock.instant();
        var counts = catalog.sandboxCountsByNode();
        return catalog.nodes().stream()
                .map(node -> new NodeStatus(node, node.alive(now), node.name().equals(name()), counts.getOrDefault(node.name(), 0)))
                .toList();
    }

    /**
     * Why each sandbox of a lost node is lost, by sandbox: those of nodes whose lease lapsed more
     * than a lease ago (not being drained), when they have no durable copy the other nodes adopt
     * (those are adopted within the same wait). Empty on a catalog no other node shares. A sandbox is
     * its node's again when the node comes back.
     */
    public Map<SandboxId, String> lostSandboxes() {
        if (!shared) return Map.of();
        var out = new HashMap<SandboxId, String>();
        Instant now = clock.instant();
        for (Node node : catalog.nodes()) {
            if (!lost(node, now)) continue;
            String why = lostReason(node);
            for (SandboxId id : catalog.sandboxesOfNode(node.name())) out.put(id, why);
        }
        return out;
    }

    /** Why a sandbox of node {@code holder}, whose lease has lapsed, is lost; empty while the node is within its grace. */
    public Optional<String> lostReason(String holder) {
        Instant now = clock.instant();
        return catalog.nodes().stream().filter(n -> n.name().equals(holder) && lost(n, now)).findFirst().map(NodeService::lostReason);
    }

    private boolean lost(Node node, Instant now) {
        return !isLocal(node) && node.lost(now, lease);
    }

    private static String lostReason(Node node) {
        return "node " + node.name() + " has not renewed its lease since " + node.leaseUntil() + ": the sandbox's processes and files"
                + " are on that host, with no durable copy to come back from elsewhere; it is back when that node is";
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
        if (watcher != null) watcher.close();
        if (renewer != null) renewer.close();
        try {
            catalog.renewNode(name(), clock.instant(), capacity.get());
        } catch (RuntimeException e) {
            log.atWarn().addKeyValue("node", name()).setCause(e).log("cannot give the node's lease up");
        }
    }
}
