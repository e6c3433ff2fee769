package io.stasis.network.linux;

import io.stasis.core.network.EgressAttempt;
import io.stasis.core.network.EgressDecisions;
import io.stasis.core.network.EgressDecision;
import io.stasis.core.network.EgressPolicy;
import io.stasis.core.network.NetworkAttachment;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.HostNetwork;
import io.stasis.network.linux.nflog.DroppedPacket;
import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sandbox networks on this host: the nftables table of this instance, and the policy answers the
 * DNS resolver and the egress proxy ask for ({@link EgressGate}). Every sandbox's rules live in
 * memory too, so that the resolver and the proxy decide without I/O; the table is rebuilt from
 * them in one transaction when the service starts.
 */
public final class LinuxHostNetwork implements HostNetwork, EgressGate, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(LinuxHostNetwork.class);
    /** An address the resolver gave out stays open at least this long: a client may connect a while after the lookup. */
    private static final Duration MIN_RESOLVED_TTL = Duration.ofMinutes(5);

    private final NetworkConfig config;
    private final AddressPlan plan;
    private final AlwaysBlocked blocked;
    private final NftRuleset rules;
    private final Nft nft;
    private volatile EgressDecisions decisions = EgressDecisions.NONE;
    private final Map<SandboxId, NftRuleset.Opened> open = new ConcurrentHashMap<>();
    private final Map<InetAddress, SandboxId> bySource = new ConcurrentHashMap<>();
    /** Per sandbox, until when (System.nanoTime) each resolved address is open in its set: a repeated lookup costs no nft run. */
    private final Map<SandboxId, Map<InetAddress, Long>> openUntil = new ConcurrentHashMap<>();
    private final IpForwarding forwarding;
    private volatile ServicePorts ports;

    public LinuxHostNetwork(NetworkConfig config) {
        this.config = config;
        this.plan = new AddressPlan(config.range(), config.interfacePrefix());
        this.blocked = new AlwaysBlocked(config.range(), config.allowedPrivate());
        this.rules = new NftRuleset(config);
        this.nft = new Nft(config.toolTimeout());
        this.forwarding = new IpForwarding(nft::hasTable);
    }

    /**
     * Installs this instance's table, with the rules of {@code sandboxes} (those known to be
     * running or about to run), in one transaction, and turns IPv4 forwarding on.
     *
     * @param decisions told of every lookup and connection the resolver or the proxy allowed or refused, and of dropped packets
     */
    public synchronized void start(ServicePorts ports, Map<SandboxId, Map.Entry<NetworkAttachment, EgressPolicy>> sandboxes,
                                   EgressDecisions decisions) {
        this.ports = ports;
        this.decisions = decisions;
        open.clear();
        bySource.clear();
        openUntil.clear();
        sandboxes.forEach((id, e) -> remember(id, new NftRuleset.Opened(e.getKey(), e.getValue())));
        nft.apply("start", rules.rebuild(ports, open.values()));
        forwarding.require(config.table());
        log.atInfo().addKeyValue("table", config.table()).addKeyValue("range", config.range())
                .addKeyValue("sandboxes", open.size()).addKeyValue("dnsPort", ports.dns())
                .addKeyValue("httpPort", ports.http()).addKeyValue("tlsPort", ports.tls()).log("sandbox networks ready");
    }

    @Override
    public NetworkAttachment attachment(int slot) {
        return plan.attachment(slot);
    }

    @Override
    public int capacity() {
        return plan.capacity();
    }

    /*
     * open, update and close hold no lock while nft runs: Nft applies the scripts of concurrent
     * callers in one run. The calls for one sandbox never overlap (the core holds the sandbox's
     * lock, or the sandbox is not known yet), and those for different sandboxes touch different
     * slots; the maps are concurrent.
     */

    @Override
    public void open(SandboxId id, NetworkAttachment attachment, EgressPolicy policy) {
        var previous = open.get(id);
        if (previous != null && previous.link().equals(attachment)) {
            update(id, policy);
            return;
        }
        if (previous != null) close(id);
        var opened = new NftRuleset.Opened(attachment, policy);
        nft.apply("open " + id, rules.open(opened, ports()));
        remember(id, opened);
    }

    @Override
    public void update(SandboxId id, EgressPolicy policy) {
        var current = open.get(id);
        if (current == null) throw new IllegalStateException("no network open for " + id);
        nft.apply("update " + id, rules.update(current.link().slot(), policy, ports()));
        openUntil.remove(id); // the update flushed the sandbox's resolved set
        open.put(id, new NftRuleset.Opened(current.link(), policy));
    }

    @Override
    public void close(SandboxId id) {
        var current = open.remove(id);
        if (current == null) return;
        bySource.remove(current.link().address());
        openUntil.remove(id);
        nft.apply("close " + id, rules.close(current.link()));
    }

    @Override
    public Set<SandboxId> listOpen() {
        return Set.copyOf(open.keySet());
    }

    @Override
    public long deniedCount(SandboxId id) {
        var current = open.get(id);
        return current == null ? 0 : nft.counter(config.table(), "denied_" + current.link().slot());
    }

    // --- EgressGate: the resolver's and the proxy's questions ---

    @Override
    public Optional<SandboxId> sandboxAt(InetAddress source) {
        return Optional.ofNullable(bySource.get(source));
    }

    @Override
    public EgressDecision domain(SandboxId sandbox, String name) {
        var current = open.get(sandbox);
        if (current == null) return EgressDecision.deny("no network");
        return current.policy().forDomain(name);
    }

    @Override
    public EgressDecision connection(SandboxId sandbox, Optional<String> name, InetAddress address) {
        var current = open.get(sandbox);
        if (current == null) return EgressDecision.deny("no network");
        var always = blocked.reason(address);
        if (always.isPresent()) return EgressDecision.deny(always.get());
        return name.map(n -> current.policy().forConnection(n, address)).orElseGet(() -> current.policy().forAddress(address));
    }

    @Override
    public void denied(SandboxId sandbox, EgressAttempt attempt) {
        log.atDebug().addKeyValue("sandbox", sandbox).addKeyValue("domain", attempt.domain().orElse(""))
                .addKeyValue("address", attempt.address().orElse("")).addKeyValue("port", attempt.port())
                .addKeyValue("rule", attempt.rule()).log("egress denied");
        decisions.denied(sandbox, attempt);
    }

    @Override
    public void allowed(SandboxId sandbox, EgressAttempt attempt) {
        decisions.allowed(sandbox, attempt);
    }

    @Override
    public void resolved(SandboxId sandbox, String name, List<InetAddress> addresses, Duration ttl) {
        var current = open.get(sandbox);
        long seconds = Math.max(ttl.toSeconds(), MIN_RESOLVED_TTL.toSeconds());
        long now = System.nanoTime();
        var known = openUntil.computeIfAbsent(sandbox, id -> new ConcurrentHashMap<>());
        // Addresses open for at least half the time asked already: nothing to do for them.
        var v4 = addresses.stream().filter(a -> a.getAddress().length == 4 && blocked.reason(a).isEmpty())
                .filter(a -> known.getOrDefault(a, now) - now < seconds * 500_000_000L).toList();
        if (current == null || v4.isEmpty()) return;
        var fresh = v4.stream().filter(a -> known.getOrDefault(a, now) - now <= 0).toList();
        var renewed = v4.stream().filter(a -> !fresh.contains(a)).toList();
        int slot = current.link().slot();
        try {
            try {
                nft.apply("resolved " + sandbox, rules.resolved(slot, fresh, renewed, seconds));
            } catch (RuntimeException expiredMeanwhile) {
                // One to renew timed out between the check and the delete: add them all, none is in the set.
                if (renewed.isEmpty()) throw expiredMeanwhile;
                nft.apply("resolved " + sandbox, rules.resolved(slot, v4, seconds));
            }
            v4.forEach(a -> known.put(a, now + seconds * 1_000_000_000L));
        } catch (RuntimeException e) {
            // The sandbox closed meanwhile, or nft failed: the name's addresses stay closed, which is safe.
            log.atDebug().addKeyValue("sandbox", sandbox).addKeyValue("name", name).setCause(e).log("could not open resolved addresses");
        }
    }

    // --- Packets the filter dropped (the NFLOG reader) ---

    /**
     * Reports a packet the filter dropped as a denied connection of the sandbox that sent it. The
     * filter names its rule coarsely ({@code "blocked"}, {@code "deny"}); where the address tells
     * more, the event carries the same rule the proxy would name ({@code "blocked link-local"},
     * {@code "deny 10.1.0.0/16"}).
     */
    public void dropped(DroppedPacket packet) {
        var sandbox = bySource.get(packet.source());
        var current = sandbox == null ? null : open.get(sandbox);
        if (current == null || packet.slot().isPresent() && packet.slot().getAsInt() != current.link().slot()) return; // closed meanwhile
        var decision = connection(sandbox, Optional.empty(), packet.destination());
        String rule = decision.allowed() || packet.rule().equals("blocked host") ? packet.rule() : decision.rule();
        log.atDebug().addKeyValue("sandbox", sandbox).addKeyValue("protocol", packet.protocolName())
                .addKeyValue("icmpType", packet.icmpType().isPresent() ? packet.icmpType().getAsInt() : "").log("packet dropped by the filter");
        denied(sandbox, new EgressAttempt(Optional.empty(), Optional.of(packet.destination().getHostAddress()), packet.port(),
                packet.protocolName(), rule));
    }

    NetworkConfig config() {
        return config;
    }

    private void remember(SandboxId id, NftRuleset.Opened opened) {
        open.put(id, opened);
        bySource.put(opened.link().address(), id);
    }

    private ServicePorts ports() {
        if (ports == null) throw new IllegalStateException("sandbox networks not started");
        return ports;
    }

    /**
     * Removes this instance's table. Sandboxes that still run lose their network until the service
     * starts again; the service calls this only when it was asked to leave nothing behind.
     */
    public synchronized void removeAll() {
        nft.apply("remove", rules.drop());
        open.clear();
        bySource.clear();
        try {
            forwarding.release(config.table());
        } catch (RuntimeException e) {
            log.atWarn().setCause(e).log("could not give IPv4 forwarding back");
        }
    }

    @Override
    public void close() {
        // The table stays: sandboxes outlive the service and keep their rules while it restarts.
    }
}
