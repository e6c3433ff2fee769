package io.stasis.core.network;

import io.stasis.core.sandbox.SandboxId;

/** A sandbox's network as the catalog records it: its slot in the address range and its policy. */
public record SandboxNetwork(SandboxId id, int slot, NetworkPolicy policy) {

    public SandboxNetwork withPolicy(NetworkPolicy newPolicy) {
        return new SandboxNetwork(id, slot, newPolicy);
    }
}
