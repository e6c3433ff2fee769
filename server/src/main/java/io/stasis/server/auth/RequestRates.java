package io.stasis.server.auth;

import io.stasis.core.auth.Caller;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.ratelimit.Rate;
import io.stasis.core.ratelimit.RateLimiter;
import io.stasis.core.tenant.TenantId;
import io.stasis.core.tenant.TenantQuota;
import io.stasis.core.tenant.TenantService;
import io.stasis.server.RateLimitSettings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Holds every authenticated API call to its credential's and its tenant's rates, and a tenant's
 * creates and forks to its create rate ({@link RateLimitSettings}, the tenant's quota); past one:
 * {@code rate_limited}, with how long to wait. The root key is never limited. The limits are this
 * node's: each node of a cluster counts what it serves. A tenant's quota is read at most once a
 * second per tenant, so a change of its rates applies within a second.
 */
public final class RequestRates {
    /** How long a tenant's quota is used before it is read again. */
    static final Duration QUOTA_TTL = Duration.ofSeconds(1);

    private record CachedQuota(TenantQuota quota, long readAt) {
    }

    private final RateLimitSettings settings;
    private final TenantService tenants;
    private final RateLimiter limiter;
    private final LongSupplier nanoClock;
    private final Map<TenantId, CachedQuota> quotas = new ConcurrentHashMap<>();

    public RequestRates(RateLimitSettings settings, TenantService tenants) {
        this(settings, tenants, System::nanoTime);
    }

    RequestRates(RateLimitSettings settings, TenantService tenants, LongSupplier nanoClock) {
        this.settings = settings;
        this.tenants = tenants;
        this.nanoClock = nanoClock;
        this.limiter = new RateLimiter(nanoClock);
    }

    /**
     * Counts a call of {@code caller}: {@code method} on {@code path} (without its query).
     *
     * @throws StasisException {@code rate_limited} naming the limit, with {@code retryAfterMs} in its details
     */
    public void admit(Caller caller, String method, String path) {
        if (caller.isRoot()) return;
        var limits = new ArrayList<RateLimiter.Limit>(3);
        var names = new LinkedHashMap<String, String>();
        settings.credentialRequests().ifPresent(rate -> add(limits, names, "credential:" + caller.credentialId(), rate,
                "the calls of credential " + caller.credentialId()));
        var tenant = caller.tenant();
        var quota = quotaOf(tenant); // a tenant may have rates of its own where the operator set none
        quota.requestRate(settings.tenantRequests()).ifPresent(rate -> add(limits, names, "tenant:" + tenant.value(), rate,
                "the calls of tenant " + tenant.value()));
        if (isCreate(method, path))
            quota.createRate(settings.tenantCreates()).ifPresent(rate -> add(limits, names, "creates:" + tenant.value(), rate,
                    "the creates and forks of tenant " + tenant.value()));
        var refused = limiter.take(limits);
        if (refused.isEmpty()) return;
        long waitMs = Math.max(1, refused.get().retryAfter().toMillis());
        var kinds = refused.get().keys().stream().map(RequestRates::kindOf).toList();
        throw new StasisException(ErrorCode.RATE_LIMITED, "too many requests: " + String.join(", ", kinds.stream().map(names::get).toList())
                + (kinds.size() == 1 ? " is" : " are") + " past the rate; try again in " + waitMs + " ms",
                Map.of("retryAfterMs", waitMs, "limits", kinds));
    }

    private static void add(List<RateLimiter.Limit> limits, Map<String, String> names, String key, Rate rate, String name) {
        limits.add(new RateLimiter.Limit(key, rate));
        names.put(kindOf(key), name + " (" + describe(rate) + ")");
    }

    /** A bucket key's kind: {@code credential}, {@code tenant} or {@code creates}. */
    private static String kindOf(String key) {
        return key.substring(0, key.indexOf(':'));
    }

    private static String describe(Rate rate) {
        return rate.perSecond() >= 1 ? String.format("%.0f a second, bursts of %d", rate.perSecond(), rate.burst())
                : String.format("%.0f a minute", rate.perSecond() * 60);
    }

    /** A create ({@code POST /v1/sandboxes}) or a fork ({@code POST /v1/sandboxes/{id}/fork}). */
    static boolean isCreate(String method, String path) {
        if (!method.equals("POST")) return false;
        String p = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
        return p.equals("/v1/sandboxes") || (p.startsWith("/v1/sandboxes/") && p.endsWith("/fork") && p.indexOf('/', "/v1/sandboxes/".length()) == p.length() - 5);
    }

    private TenantQuota quotaOf(TenantId tenant) {
        long now = nanoClock.getAsLong();
        var cached = quotas.get(tenant);
        if (cached != null && now - cached.readAt() < QUOTA_TTL.toNanos()) return cached.quota();
        TenantQuota quota;
        try {
            quota = tenants.get(tenant.value()).quota();
        } catch (StasisException e) {
            quota = TenantQuota.UNLIMITED; // deleted meanwhile: the call itself will say so
        }
        quotas.put(tenant, new CachedQuota(quota, now));
        return quota;
    }
}
