package io.stasis.core.spi;

import io.stasis.core.sandbox.Page;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxQuery;
import io.stasis.core.tenant.TenantId;
import java.util.List;
import java.util.Optional;

/** The catalog's sandbox records. Writes are atomic and durable when the call returns; thread-safe. */
public interface SandboxCatalog {
    /** Records a new sandbox. {@code name_taken} if its name is in use. */
    void insert(Sandbox sandbox);

    /** Replaces a sandbox's record (same id). */
    void update(Sandbox sandbox);

    Optional<Sandbox> find(SandboxId id);

    /** The tenant's sandbox with this name (names are unique within a tenant). */
    Optional<Sandbox> findByName(TenantId tenant, String name);

    /** A page of sandboxes, oldest first, filtered as the query says. Sandboxes being deleted are left out. */
    Page<Sandbox> list(SandboxQuery query);

    /** Every sandbox record, including those being deleted (for reconciliation). */
    List<Sandbox> all();

    /** Sandboxes forked from {@code parent}, oldest first. */
    List<Sandbox> children(SandboxId parent);

    /** Forgets a sandbox (its operation too). Idempotent. */
    void delete(SandboxId id);
}
