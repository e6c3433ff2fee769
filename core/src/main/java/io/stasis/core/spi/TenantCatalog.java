package io.stasis.core.spi;

import io.stasis.core.tenant.QuotaHold;
import io.stasis.core.tenant.Tenant;
import io.stasis.core.tenant.TenantId;
import io.stasis.core.tenant.TenantUsage;
import java.util.List;
import java.util.Optional;

/**
 * Tenants and what they hold; the default tenant exists from the start. Writes are atomic and
 * durable when the call returns; thread-safe.
 */
public interface TenantCatalog {
    /** Records a tenant; {@code name_taken} if its name is in use. */
    void insertTenant(Tenant tenant);

    void updateTenant(Tenant tenant);

    Optional<Tenant> findTenant(TenantId id);

    /** Every tenant, oldest first. */
    List<Tenant> allTenants();

    /**
     * Deletes a tenant with its keys, tokens and secrets, in one transaction, unless it has
     * sandboxes or volumes (checked in the same transaction) or is the default tenant. Returns
     * whether it was deleted.
     */
    boolean deleteTenantIfEmpty(TenantId id);

    /** What the tenant holds, counted as its quota counts (sandboxes being deleted hold nothing). */
    TenantUsage usage(TenantId tenant);

    /**
     * Records {@code hold} on this node (see {@link NodeCatalog#localNode}) if {@code admission}
     * accepts the figures of that moment. Holds take turns across every node sharing the catalog: no
     * two are admitted on the same figures. Nothing is recorded if {@code admission} throws.
     */
    void hold(QuotaHold hold, QuotaHold.Admission admission);

    /** Drops a hold; nothing if it is gone already. */
    void releaseHold(String id);

    /** Drops every hold of {@code node}: those of its previous process at its start, or those of a lost node. Returns how many. */
    int releaseHoldsOf(String node);
}
