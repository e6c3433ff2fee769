package io.stasis.core.spi;

import io.stasis.core.network.SandboxNetwork;
import io.stasis.core.sandbox.SandboxId;
import java.util.List;
import java.util.Optional;

/**
 * A row per sandbox with a network, removed by {@link SandboxCatalog#delete} with the sandbox.
 * Writes are atomic and durable when the call returns; thread-safe.
 */
public interface NetworkCatalog {
    /** Records a sandbox's network; {@code invalid_state} if its slot is taken. */
    void insertNetwork(SandboxNetwork network);

    /** Replaces a sandbox's network policy (same id and slot). */
    void updateNetwork(SandboxNetwork network);

    Optional<SandboxNetwork> findNetwork(SandboxId id);

    List<SandboxNetwork> allNetworks();

    /** Forgets a network whose sandbox is gone (reconciliation). Idempotent. */
    void deleteNetwork(SandboxId id);
}
