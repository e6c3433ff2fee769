package io.stasis.core.spi;

import io.stasis.core.auth.ApiKey;
import io.stasis.core.sandbox.Page;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxQuery;
import java.util.List;
import java.util.Optional;

/**
 * Durable metadata: what sandboxes exist, in which state, and the API keys. Writes are atomic
 * and durable when the call returns. Implementations are thread-safe.
 */
public interface Catalog extends AutoCloseable {

    /** Records a new sandbox. {@code name_taken} if its name is in use. */
    void insert(Sandbox sandbox);

    /** Replaces a sandbox's record (same id). */
    void update(Sandbox sandbox);

    Optional<Sandbox> find(SandboxId id);

    Optional<Sandbox> findByName(String name);

    /** A page of sandboxes, oldest first, filtered as the query says. */
    Page<Sandbox> list(SandboxQuery query);

    /** Every sandbox record (for reconciliation). */
    List<Sandbox> all();

    /** Forgets a sandbox. Idempotent. */
    void delete(SandboxId id);

    void insertApiKey(ApiKey key);

    /** The key with this hash of its secret. */
    Optional<ApiKey> findApiKeyByHash(String secretHash);

    /** Whether a root key exists (created on the first start). */
    boolean hasRootKey();

    @Override
    void close();
}
