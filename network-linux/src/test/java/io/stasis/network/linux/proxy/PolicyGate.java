package io.stasis.network.linux.proxy;

import io.stasis.core.network.DeniedConnection;
import io.stasis.core.network.EgressDecision;
import io.stasis.core.network.EgressPolicy;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.network.linux.EgressGate;
import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/** A gate answering from one {@link EgressPolicy} for fixed sandbox addresses, keeping what it was told was denied. */
final class PolicyGate implements EgressGate {
    private final Map<InetAddress, SandboxId> owners;
    private final EgressPolicy policy;
    final List<DeniedConnection> denied = new CopyOnWriteArrayList<>();

    PolicyGate(Map<InetAddress, SandboxId> owners, EgressPolicy policy) {
        this.owners = Map.copyOf(owners);
        this.policy = policy;
    }

    @Override
    public Optional<SandboxId> sandboxAt(InetAddress source) {
        return Optional.ofNullable(owners.get(source));
    }

    @Override
    public EgressDecision domain(SandboxId sandbox, String name) {
        return policy.forDomain(name);
    }

    @Override
    public EgressDecision connection(SandboxId sandbox, Optional<String> name, InetAddress address) {
        return name.map(n -> policy.forConnection(n, address)).orElseGet(() -> policy.forAddress(address));
    }

    @Override
    public void denied(SandboxId sandbox, DeniedConnection attempt) {
        denied.add(attempt);
    }

    @Override
    public void resolved(SandboxId sandbox, String name, List<InetAddress> addresses, Duration ttl) {
    }
}
