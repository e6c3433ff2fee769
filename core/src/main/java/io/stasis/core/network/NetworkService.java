package io.stasis.core.network;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.events.EventLog;
import io.stasis.core.lifecycle.SandboxLocks;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.secret.SecretInjection;
import io.stasis.core.spi.Catalog;
import io.stasis.core.spi.HostNetwork;
import io.stasis.core.tenant.TenantId;
import java.net.InetAddress;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.BitSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * Sandbox networks: which slot of the address range each sandbox holds, its policy, and the host's
 * rules that enforce it. A slot is taken before the sandbox starts (rules first, then the link) and
 * given back when the sandbox is deleted; hibernated and stopped sandboxes keep theirs, so they
 * come back with the same address. Without a host network (disabled by the operator) sandboxes
 * have loopback only.
 */
public final class NetworkService implements EgressDecisions {
    /** Identical refusals of one sandbox within this window become one event. */
    private static final Duration DENIED_EVENT_WINDOW = Duration.ofSeconds(10);

    private final Catalog catalog;
    private final SandboxLocks locks;
    private final Optional<HostNetwork> host;
    private final NetworkPolicy defaultPolicy;
    private final EventLog events;
    private final Clock clock;
    /** Slots of sandboxes that are not in the catalog yet (starting, or warm in the pool). */
    private final Map<SandboxId, SandboxNetwork> unrecorded = new HashMap<>();
    private final Map<String, Instant> lastDeniedEvent = new ConcurrentHashMap<>();
    private final Optional<SecretInjection> injection;

    /**
     * @param injection secret headers (policies' {@code rules}); without it, policies with rules are refused
     * @param locks     the sandboxes' locks: a policy change excludes a delete, a hibernation and another change of the same sandbox
     */
    public NetworkService(Catalog catalog, Optional<HostNetwork> host, NetworkPolicy defaultPolicy, EventLog events, Clock clock,
                          Optional<SecretInjection> injection, SandboxLocks locks) {
        this.locks = locks;
        this.injection = injection;
        this.catalog = catalog;
        this.host = host;
        this.defaultPolicy = defaultPolicy;
        this.events = events;
        this.clock = clock;
    }

    public boolean enabled() {
        return host.isPresent();
    }

    public NetworkPolicy defaultPolicy() {
        return defaultPolicy;
    }

    /**
     * Takes a slot for a sandbox about to start and installs its rules; returns the link the
     * runtime plugs in. Nothing is recorded until {@link #record}: a failed start calls {@link #release}.
     * {@code inheritFrom}: a fork's parent, whose address the fork's restored sockets may be bound to.
     */
    public Optional<NetworkAttachment> open(SandboxId id, NetworkPolicy policy, Optional<SandboxId> inheritFrom) {
        return openAhead(id, policy, inheritFrom).await();
    }

    /**
     * {@link #open}, with the rules installed on a thread of their own while the caller starts the
     * sandbox: the link is known at once, the host's {@code nft} run (15-40 ms, more with many
     * sandboxes) overlaps the start. Until the rules are in, the host drops whatever the sandbox
     * sends (its address is not among the sources the host accepts), so an early start fails
     * closed. What goes into the root (the egress CA) is in before this returns. The caller must
     * {@link Opening#await} before it records the sandbox and before it releases it after a failed
     * start (a release that overtook the install would leave its rules).
     */
    public Opening openAhead(SandboxId id, NetworkPolicy policy, Optional<SandboxId> inheritFrom) {
        if (host.isEmpty()) return new Opening(Optional.empty(), CompletableFuture.completedFuture(null));
        SandboxNetwork network;
        synchronized (this) {
            network = new SandboxNetwork(id, freeSlot(), policy);
            unrecorded.put(id, network);
        }
        var link = host.get().attachment(network.slot());
        var rules = new CompletableFuture<Void>();
        Thread.ofVirtual().name("network-open-" + id.value()).start(() -> {
            try {
                host.get().open(id, link, policy.egress());
                rules.complete(null);
            } catch (RuntimeException | Error e) {
                undoOpen(id, e);
                rules.completeExceptionally(e);
            }
        });
        var parentLink = inheritFrom.flatMap(this::linkOf);
        var opening = new Opening(Optional.of(parentLink.map(p -> link.inheriting(p.address())).orElse(link)), rules);
        try {
            prepareRules(id, policy, inheritFrom);
        } catch (RuntimeException e) {
            opening.awaitAfter(e);
            undoOpen(id, e);
            throw e;
        }
        return opening;
    }

    /** A sandbox's link, and its rules being installed (see {@link #openAhead}). */
    public record Opening(Optional<NetworkAttachment> link, CompletableFuture<Void> rules) {
        /**
         * The link once the rules are in; their failure (the slot given back) is thrown. Waits for
         * them to end even when interrupted ({@link CompletableFuture#join} does, and keeps the
         * interrupt): what comes next must not run beside them.
         */
        public Optional<NetworkAttachment> await() {
            try {
                rules.join();
                return link;
            } catch (CompletionException e) {
                if (e.getCause() instanceof RuntimeException r) throw r;
                if (e.getCause() instanceof Error r) throw r;
                throw e;
            }
        }

        /** {@link #await} after the start failed with {@code failure}, to which the rules' own failure is added. */
        void awaitAfter(RuntimeException failure) {
            try {
                await();
            } catch (RuntimeException e) {
                failure.addSuppressed(e);
            }
        }

        /**
         * Runs {@code start} (which plugs in {@link #link}) while the rules go in, and returns once
         * both are done; the start's failure comes first, the rules' is added to it.
         */
        public void runBeside(Runnable start) {
            try {
                start.run();
            } catch (RuntimeException e) {
                awaitAfter(e);
                throw e;
            }
            await();
        }
    }

    /** What a failed open took back: the slot, and whatever rules were installed. */
    private void undoOpen(SandboxId id, Throwable failure) {
        synchronized (this) {
            unrecorded.remove(id);
        }
        try {
            host.get().close(id);
        } catch (RuntimeException closing) {
            failure.addSuppressed(closing);
        }
    }

    /** Records an opened sandbox's network, before the sandbox's own row (a crash between leaves an orphan the reconciler removes). */
    public void record(SandboxId id) {
        // Under the lock that freeSlot runs under: a slot must never be in neither place, or a
        // concurrent open takes it too (seen: two of twenty concurrent creates on slot 0).
        synchronized (this) {
            var network = unrecorded.get(id);
            if (network == null) return;
            catalog.insertNetwork(network);
            unrecorded.remove(id);
        }
    }

    /** Gives a warm sandbox, opened with the pool's policy, the policy of its new owner. */
    public void adopt(SandboxId id, NetworkPolicy policy) {
        adopt(id, policy, Optional.empty());
    }

    /** As {@link #adopt(SandboxId, NetworkPolicy)}, for a fork restored ahead: its secret-header rules trust {@code inheritFrom}'s CA, as its processes do. */
    public void adopt(SandboxId id, NetworkPolicy policy, Optional<SandboxId> inheritFrom) {
        if (host.isEmpty()) return;
        EgressPolicy before;
        synchronized (this) {
            var network = unrecorded.get(id);
            if (network == null) throw new IllegalStateException("no unrecorded network for warm sandbox " + id);
            before = network.policy().egress();
            unrecorded.put(id, network.withPolicy(policy));
        }
        // The pool's policy is the default one of many services (deny all): nothing to change then.
        if (!before.equals(policy.egress())) host.get().update(id, policy.egress());
        prepareRules(id, policy, inheritFrom);
        record(id);
    }

    /**
     * Gives a sandbox adopted from another node a slot here and installs its recorded policy's rules,
     * then calls {@code commit} with the slot (empty without a network) to record the adoption; a
     * commit that says no (another node adopted it first) takes the rules down again.
     */
    public boolean rehome(SandboxId id, Predicate<OptionalInt> commit) {
        var recorded = catalog.findNetwork(id);
        if (host.isEmpty() || recorded.isEmpty()) return commit.test(OptionalInt.empty());
        SandboxNetwork network;
        synchronized (this) {
            network = new SandboxNetwork(id, freeSlot(), recorded.get().policy());
            unrecorded.put(id, network);
        }
        boolean adopted = false;
        try {
            host.get().open(id, host.get().attachment(network.slot()), network.policy().egress());
            prepareRules(id, network.policy(), Optional.empty());
            synchronized (this) { // as record: the slot is never in neither place
                adopted = commit.test(OptionalInt.of(network.slot()));
                unrecorded.remove(id);
            }
            return adopted;
        } finally {
            if (!adopted) {
                synchronized (this) {
                    unrecorded.remove(id);
                }
                host.get().close(id);
                injection.ifPresent(i -> i.forget(id));
            }
        }
    }

    /**
     * Removes a sandbox's rules and gives its slot back. Call it while the sandbox's catalog row (and
     * so its recorded network) still exists: its rules are named by slot, and a slot free before they
     * are gone could go to a new sandbox whose rules this would then remove (seen: at 50 creates at
     * once, a delete failed on rules already gone, and another sandbox ran without its policy).
     */
    public void release(SandboxId id) {
        host.ifPresent(h -> h.close(id));
        synchronized (this) {
            unrecorded.remove(id);
        }
        injection.ifPresent(i -> i.forget(id));
    }

    /** The link of a sandbox that has a network: to plug in again on a resume or a start. */
    public Optional<NetworkAttachment> linkOf(SandboxId id) {
        if (host.isEmpty()) return Optional.empty();
        return network(id).map(n -> host.get().attachment(n.slot()));
    }

    /** The address at which the host reaches the sandbox, if it has a network. */
    public Optional<InetAddress> addressOf(SandboxId id) {
        return linkOf(id).map(NetworkAttachment::address);
    }

    /** The networks to install when the service starts: every recorded sandbox's. */
    public Map<SandboxId, Map.Entry<NetworkAttachment, EgressPolicy>> recorded() {
        var out = new LinkedHashMap<SandboxId, Map.Entry<NetworkAttachment, EgressPolicy>>();
        if (host.isEmpty()) return out;
        for (var n : catalog.allNetworks()) out.put(n.id(), Map.entry(host.get().attachment(n.slot()), n.policy().egress()));
        return out;
    }

    /** The sandbox's policy (the default for a sandbox without a network). */
    public NetworkPolicy policyOf(SandboxId id) {
        return network(id).map(SandboxNetwork::policy).orElse(defaultPolicy);
    }

    /** What the API shows of a sandbox's network. */
    public record View(boolean enabled, Optional<InetAddress> address, Optional<InetAddress> gateway, NetworkPolicy policy,
                       long deniedConnections) {
    }

    public View view(SandboxId id) {
        var network = network(id);
        if (host.isEmpty() || network.isEmpty()) return new View(false, Optional.empty(), Optional.empty(),
                network.map(SandboxNetwork::policy).orElse(defaultPolicy), 0);
        var link = host.get().attachment(network.get().slot());
        return new View(true, Optional.of(link.address()), Optional.of(link.gateway()), network.get().policy(),
                host.get().deniedCount(id));
    }

    /**
     * Replaces a sandbox's policy. New connections follow it at once; established ones continue.
     * Takes the sandbox's lock: no delete, hibernation or other change of it runs meanwhile.
     */
    public View update(SandboxId id, NetworkPolicy policy) {
        return locks.exclusive(id, () -> updateLocked(id, policy));
    }

    private View updateLocked(SandboxId id, NetworkPolicy policy) {
        if (host.isEmpty()) throw noNetwork(id, "set a network policy");
        var network = network(id).orElseThrow(() -> noNetwork(id, "set a network policy"));
        validate(tenantOf(id), policy);
        prepareRules(id, policy, Optional.empty());
        host.get().update(id, policy.egress());
        catalog.updateNetwork(network.withPolicy(policy));
        events.append("network.policy", Optional.of(id), Map.of("sandboxId", id.value(), "default", policy.egress().defaultAction().wireName(),
                "allow", policy.egress().allow().stream().map(Object::toString).toList(),
                "deny", policy.egress().deny().stream().map(Object::toString).toList(),
                "rules", policy.rules().stream().map(r -> r.domain().pattern()).toList()));
        return view(id);
    }

    // --- secret headers (rules) ---

    /**
     * Checks what a policy's rules need beyond their syntax: secret injection configured, and the
     * secrets they name existing. Called for policies the API gives (create and replace), not for
     * inherited ones (a fork keeps its parent's rules even if a secret was deleted meanwhile).
     */
    public void validate(TenantId tenant, NetworkPolicy policy) {
        if (policy.rules().isEmpty()) return;
        if (injection.isEmpty()) throw StasisException.invalid("network.rules", "secret headers are not available on this service");
        injection.get().validate(tenant, policy);
    }

    /**
     * For the egress proxy: what to do with the sandbox's TLS connection presenting {@code name}
     * (empty: pass it through). The rules' secrets are the sandbox's tenant's.
     */
    public Optional<SecretInjection.Resolved> headersFor(SandboxId id, String name) {
        if (injection.isEmpty()) return Optional.empty();
        var policy = policyOf(id);
        if (policy.rules().isEmpty()) return Optional.empty();
        return injection.get().resolve(tenantOf(id), policy, name);
    }

    private TenantId tenantOf(SandboxId id) {
        return catalog.find(id).map(Sandbox::tenant).orElseThrow(() -> StasisException.sandboxNotFound(id.value()));
    }

    private void prepareRules(SandboxId id, NetworkPolicy policy, Optional<SandboxId> inheritFrom) {
        if (policy.rules().isEmpty()) return;
        injection.orElseThrow(() -> StasisException.invalid("network.rules", "secret headers are not available on this service"))
                .prepare(id, policy, inheritFrom);
    }

    /** {@code invalid_state}: the sandbox has loopback only (the service runs with {@code --network none}, or it is being deleted). */
    public static StasisException noNetwork(SandboxId id, String action) {
        return new StasisException(ErrorCode.INVALID_STATE, "sandbox " + id + " has no network (loopback only; "
                + "the service runs with --network none or the sandbox is being deleted): cannot " + action,
                Map.of("sandbox", id.value(), "action", action));
    }

    /** An allowed lookup or connection: nothing to publish (the audit log keeps them). */
    @Override
    public void allowed(SandboxId id, EgressAttempt attempt) {
    }

    /** Publishes a refused lookup or connection as an event, at most one per identical refusal and window. */
    @Override
    public void denied(SandboxId id, EgressAttempt attempt) {
        String key = id + "|" + attempt.domain().orElse("") + "|" + attempt.address().orElse("") + "|" + attempt.port() + "|" + attempt.rule();
        var now = clock.instant();
        var last = lastDeniedEvent.get(key);
        if (last != null && Duration.between(last, now).compareTo(DENIED_EVENT_WINDOW) < 0) return;
        lastDeniedEvent.put(key, now);
        if (lastDeniedEvent.size() > 10_000) lastDeniedEvent.clear();
        var data = new LinkedHashMap<String, Object>();
        data.put("sandboxId", id.value());
        attempt.domain().ifPresent(d -> data.put("domain", d));
        attempt.address().ifPresent(a -> data.put("address", a));
        data.put("port", attempt.port());
        data.put("protocol", attempt.protocol());
        data.put("rule", attempt.rule());
        events.append("network.denied", Optional.of(id), data);
    }

    /** Forgets recorded networks whose sandbox is gone (reconciliation); returns how many. */
    public int removeOrphans(Set<SandboxId> known) {
        int removed = 0;
        for (var n : catalog.allNetworks()) {
            if (known.contains(n.id())) continue;
            catalog.deleteNetwork(n.id());
            removed++;
        }
        return removed;
    }

    private Optional<SandboxNetwork> network(SandboxId id) {
        synchronized (this) {
            var pending = unrecorded.get(id);
            if (pending != null) return Optional.of(pending);
        }
        return catalog.findNetwork(id);
    }

    /** The lowest slot neither recorded nor held by an unrecorded sandbox. */
    private int freeSlot() {
        var taken = new BitSet();
        for (var n : catalog.allNetworks()) taken.set(n.slot());
        for (var n : unrecorded.values()) taken.set(n.slot());
        int slot = taken.nextClearBit(0);
        if (slot >= host.orElseThrow().capacity())
            throw new StasisException(ErrorCode.INVALID_STATE,
                    "the sandbox network range is full (" + host.get().capacity() + " sandboxes); delete sandboxes or configure a larger --network-range");
        return slot;
    }
}
