package io.stasis.core.tenant;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.spi.TenantCatalog;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * Admits operations that make a tenant hold more (create, fork, resume from hibernation or a
 * stop) only while the tenant stays within its {@link TenantQuota}.
 * <p>The check and the operation are not one transaction: a create takes long, and tenants' creates
 * must run in parallel. So an admitted demand is held as a reservation until its operation ends,
 * and every check counts the catalog plus the reservations in flight. While an operation's result
 * is already in the catalog and its reservation not yet dropped, both count: near the limit a
 * concurrent request may be refused for that instant, never admitted past it.
 */
public final class QuotaGuard {
    private final TenantCatalog catalog;
    private final Map<TenantId, TenantUsage> reserved = new HashMap<>();

    public QuotaGuard(TenantCatalog catalog) {
        this.catalog = catalog;
    }

    /**
     * Runs {@code operation} if the tenant's usage plus {@code demand} fits its quota.
     *
     * @throws StasisException {@code quota_exceeded} naming the quota, its limit, the usage and the demand
     */
    public <T> T admit(TenantId tenant, TenantUsage demand, Supplier<T> operation) {
        reserve(tenant, demand);
        try {
            return operation.get();
        } finally {
            release(tenant, demand);
        }
    }

    /**
     * Holds {@code demand} for the tenant until the returned release runs: for what the service
     * keeps on a tenant's behalf outside the catalog (a fork's spares, see ForkSpares).
     *
     * @throws StasisException {@code quota_exceeded}, as {@link #admit}
     */
    public Runnable hold(TenantId tenant, TenantUsage demand) {
        reserve(tenant, demand);
        var released = new AtomicBoolean();
        return () -> {
            if (released.compareAndSet(false, true)) release(tenant, demand);
        };
    }

    /** What the tenant holds now, by the catalog. */
    public TenantUsage usage(TenantId tenant) {
        return catalog.usage(tenant);
    }

    private void reserve(TenantId tenant, TenantUsage demand) {
        var quota = catalog.findTenant(tenant).map(Tenant::quota).orElse(TenantQuota.UNLIMITED);
        synchronized (reserved) {
            var held = catalog.usage(tenant).plus(reserved.getOrDefault(tenant, TenantUsage.NONE));
            check("runningSandboxes", quota.runningSandboxes().map(Integer::longValue), held.runningSandboxes(), demand.runningSandboxes(), tenant);
            check("memoryMb", quota.memoryMb(), held.memoryMb(), demand.memoryMb(), tenant);
            check("diskMb", quota.diskMb(), held.diskMb(), demand.diskMb(), tenant);
            // Nothing held for nothing asked (a fork whose sandboxes all come from spares): no entry that another release could empty.
            if (!demand.equals(TenantUsage.NONE)) reserved.merge(tenant, demand, TenantUsage::plus);
        }
    }

    private void release(TenantId tenant, TenantUsage demand) {
        if (demand.equals(TenantUsage.NONE)) return;
        synchronized (reserved) {
            var left = reserved.get(tenant).minus(demand);
            if (left.equals(TenantUsage.NONE)) reserved.remove(tenant);
            else reserved.put(tenant, left);
        }
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
