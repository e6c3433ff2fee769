package io.stasis.core.tenant;

/**
 * What an operation in flight asks for, held in the catalog from its admission to its end (see
 * {@link QuotaGuard}): counted in its tenant's usage and its node's load on every node sharing the
 * catalog, so that creates on several nodes at once never overshoot a tenant quota or a node.
 *
 * @param id     unique, for its release
 * @param tenant whose quota it counts in
 * @param demand what it asks for
 */
public record QuotaHold(String id, TenantId tenant, TenantUsage demand) {

    /** Decides, on what the tenant and the node hold at that moment, whether a hold may be added; throws to refuse it. */
    @FunctionalInterface
    public interface Admission {
        /**
         * @param tenantHeld what the hold's tenant holds: its recorded sandboxes and volumes plus its holds on every node
         * @param nodeHeld   what this node holds: its sandboxes (those with processes for running and memory, all for disk) plus its holds
         */
        void check(TenantUsage tenantHeld, TenantUsage nodeHeld);
    }
}
