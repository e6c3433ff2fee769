package io.stasis.network.linux;

import io.stasis.core.network.EgressAttempt;
import io.stasis.core.network.EgressDecision;
import io.stasis.core.network.EgressPolicy;
import io.stasis.core.sandbox.SandboxId;
import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/** A gate over one policy and fixed owners, recording what the resolver and the proxy report (for their tests). */
public final class RecordingGate implements EgressGate {
    private final Map<InetAddress, SandboxId> owners;
    private final EgressPolicy policy;
    private final List<EgressAttempt> denied = new CopyOnWriteArrayList<>();
    private final List<EgressAttempt> allowed = new CopyOnWriteArrayList<>();
    private final List<Resolution> resolved = new CopyOnWriteArrayList<>();

    public record Resolution(SandboxId sandbox, String name, List<InetAddress> addresses, Duration ttl) {
    }

    public RecordingGate(Map<InetAddress, SandboxId> owners, EgressPolicy policy) {
        this.owners = Map.copyOf(owners);
        this.policy = policy;
    }

    public List<EgressAttempt> denied() {
        return List.copyOf(denied);
    }

    public List<EgressAttempt> allowed() {
        return List.copyOf(allowed);
    }

    public List<Resolution> resolved() {
        return List.copyOf(resolved);
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
    public void denied(SandboxId sandbox, EgressAttempt attempt) {
        denied.add(attempt);
    }

    @Override
    public void allowed(SandboxId sandbox, EgressAttempt attempt) {
        allowed.add(attempt);
    }

    @Override
    public void resolved(SandboxId sandbox, String name, List<InetAddress> addresses, Duration ttl) {
        resolved.add(new Resolution(sandbox, name, addresses, ttl));
    }
}
