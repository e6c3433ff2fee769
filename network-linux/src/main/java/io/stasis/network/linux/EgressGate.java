package io.stasis.network.linux;

import io.stasis.core.network.EgressAttempt;
import io.stasis.core.network.EgressDecision;
import io.stasis.core.sandbox.SandboxId;
import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * What the DNS resolver and the egress proxy ask of the sandbox networks: whose traffic is this,
 * may it go there, and what to record. Thread-safe; answers come from memory (no I/O).
 */
public interface EgressGate {

    /** The sandbox that owns {@code source} (a sandbox-side veth address), if any. */
    Optional<SandboxId> sandboxAt(InetAddress source);

    /** Whether the sandbox may resolve or reach {@code name}. */
    EgressDecision domain(SandboxId sandbox, String name);

    /** Whether the sandbox may reach {@code address}, a connection presenting {@code name} if known. */
    EgressDecision connection(SandboxId sandbox, Optional<String> name, InetAddress address);

    /** Records a refused lookup or connection (counted, published as an event, audited). */
    void denied(SandboxId sandbox, EgressAttempt attempt);

    /** Records an allowed lookup or relayed connection (audited). */
    void allowed(SandboxId sandbox, EgressAttempt attempt);

    /**
     * The resolver answered an allowed {@code name} with {@code addresses}: connections from the
     * sandbox to them on ports the proxy does not see may pass for {@code ttl}.
     */
    void resolved(SandboxId sandbox, String name, List<InetAddress> addresses, Duration ttl);
}
