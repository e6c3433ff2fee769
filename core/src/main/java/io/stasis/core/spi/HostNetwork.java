package io.stasis.core.spi;

import io.stasis.core.network.EgressPolicy;
import io.stasis.core.network.NetworkAttachment;
import io.stasis.core.sandbox.SandboxId;
import java.util.Set;

/**
 * The host side of sandbox networks: addresses, forwarding, NAT and the enforcement of each
 * sandbox's egress policy, all outside the sandbox where nothing inside can change it. The runtime
 * plugs the sandbox end of the link (see {@link io.stasis.core.spi.RuntimeSpec#network()}).
 */
public interface HostNetwork {

    /** The link a sandbox in {@code slot} gets; pure, the same for the same slot. */
    NetworkAttachment attachment(int slot);

    /** How many slots the configured range holds. */
    int capacity();

    /**
     * Installs the sandbox's rules, before its link exists, so that no packet passes unfiltered.
     * Idempotent: opening an open sandbox replaces its rules.
     */
    void open(SandboxId id, NetworkAttachment attachment, EgressPolicy policy);

    /** Replaces a sandbox's policy: new connections follow it, established ones continue. */
    void update(SandboxId id, EgressPolicy policy);

    /** Removes the sandbox's rules. Idempotent. */
    void close(SandboxId id);

    /** Sandboxes with rules installed on the host (for reconciliation). */
    Set<SandboxId> listOpen();

    /** Denied connections counted for the sandbox since its rules were installed. */
    long deniedCount(SandboxId id);
}
