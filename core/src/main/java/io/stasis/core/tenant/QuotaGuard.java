package io.stasis.core.tenant;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.spi.TenantCatalog;
import io.stasis.core.node.NodeLimits;
import io.stasis.core.sandbox.RuntimeKind;
import java.util.LinkedHashMap;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * Admits operations that make a tenant hold more (create, fork, resume from hibernation or a
 * stop) only while the tenant stays within its {@link TenantQuota}, and this node within its
 * {@link NodeLimits}.
 * <p>The check and the operation are not one transaction: a create takes long, and tenants' creates
 * must run in parallel. So an admitted demand is held in the catalog ({@link QuotaHold}) until its
 * operation ends, and every check counts the recorded sandboxes plus the holds in flight, of every
 * node sharing the catalog. While an operation's result is already recorded and its hold not yet
 * dropped, both count: near the limit a concurrent request may be refused for that instant, never
 * admitted past it.
 */
public final class QuotaGuard {
    private final TenantCatalog catalog;
    private final String node;
    private final NodeLimits limits;

    /** @param node this node's name, for what its refusals say */
    public QuotaGuard(TenantCatalog catalog, String node, NodeLimits limits) {
        this.catalog = catalog;
        this.node = node;
        this.limits = limits;
    }

    /** What this node may hold at once. */
    public NodeLimits limits() {
        return limits;
    }

    /**
     * Runs {@code operation} if the tenant's usage plus {@code demand} fits its quota.
     *
     * @throws StasisException {@code quota_exceeded} naming the quota, its limit, the usage and the demand
     */
    public <T> T admit(TenantId tenant, TenantUsage demand, Supplier<T> operation) {
        var hold = reserve(tenant, demand);
        try {
            return operation.get();
        } finally {
            release(hold);
        }
    }

    /**
     * Holds {@code demand} for the tenant until the returned release runs: for what the service
     * keeps on a tenant's behalf outside the catalog (a fork's spares, see ForkSpares).
     *
     * @throws StasisException {@code quota_exceeded}, as {@link #admit}
     */
    public Runnable hold(TenantId tenant, TenantUsage demand) {
        var hold = reserve(tenant, demand);
        var released = new AtomicBoolean();
        return () -> {
            if (released.compareAndSet(false, true)) release(hold);
        };
    }

    /**
     * Refuses, {@code forbidden}, to start anything of the tenant in a runtime its quota does not
     * allow (a tenant held to gVisor): creates, forks, restores and starts of what sleeps without processes.
     *
     * @param what what would start, for the message: "create", "fork of sbx_..."
     */
    public void requireRuntime(TenantId tenant, RuntimeKind runtime, String what) {
        quotaOf(tenant).requireRuntime(tenant, runtime, what);
    }

    /** The runtime of the tenant's create that names none (see {@link TenantQuota#runtimeFor}). */
    public RuntimeKind runtimeFor(TenantId tenant, RuntimeKind serviceDefault) {
        return quotaOf(tenant).runtimeFor(serviceDefault);
    }

    /** The tenant's quota; unlimited for a tenant the catalog does not have. */
    private TenantQuota quotaOf(TenantId tenant) {
        return catalog.findTenant(tenant).map(Tenant::quota).orElse(TenantQuota.UNLIMITED);
    }

    /** What the tenant holds now, by the catalog. */
    public TenantUsage usage(TenantId tenant) {
        return catalog.usage(tenant);
    }

    /** Records the hold once the tenant's quota and the node's limits admit it; empty for nothing asked (a fork whose sandboxes all come from spares). */
    private Optional<String> reserve(TenantId tenant, TenantUsage demand) {
        if (demand.equals(TenantUsage.NONE)) return Optional.empty();
        var quota = quotaOf(tenant);
        var hold = new QuotaHold("qh_" + UUID.randomUUID(), tenant, demand);
        catalog.hold(hold, (tenantHeld, nodeHeld) -> {
            check("runningSandboxes", quota.runningSandboxes().map(Integer::longValue), tenantHeld.runningSandboxes(), demand.runningSandboxes(), tenant);
            check("memoryMb", quota.memoryMb(), tenantHeld.memoryMb(), demand.memoryMb(), tenant);
            check("diskMb", quota.diskMb(), tenantHeld.diskMb(), demand.diskMb(), tenant);
            limits.check(node, nodeHeld, demand);
        });
        return Optional.of(hold.id());
    }

    private void release(Optional<String> hold) {
        hold.ifPresent(catalog::releaseHold);
    }

    private static void check(String quota, Optional<Long> limit, long used, long demand, TenantId tenant) {
        if (demand <= 0 || limit.isEmpty() || used + demand <= limit.get()) return;
        var details = new LinkedHashMap<String, Object>();
        details.put("quota", quota);
        details.put("limit", limit.get());
        details.put("used", used);
        details.put("requested", demand);
        throw new StasisException(ErrorCode.QUOTA_EXCEEDED, "tenant quota " + quota + " exceeded: the limit is " + limit.get()
                + ", " + used + " in use, " + demand + " more asked (tenant " + tenant + ")", details);
    }
}
