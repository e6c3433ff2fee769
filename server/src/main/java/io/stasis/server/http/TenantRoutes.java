package io.stasis.server.http;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.stasis.core.auth.ApiKey;
import io.stasis.core.auth.Caller;
import io.stasis.core.auth.Credentials;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.RuntimeKind;
import io.stasis.core.tenant.QuotaGuard;
import io.stasis.core.tenant.Tenant;
import io.stasis.core.tenant.TenantQuota;
import io.stasis.core.tenant.TenantService;
import io.stasis.core.tenant.TenantUsage;
import io.stasis.server.auth.Access;
import io.stasis.server.auth.BearerAuth;
import io.stasis.server.http.Views.ListView;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/** Tenants, their quotas and their API keys: the root key's business, but a tenant may look at itself. */
final class TenantRoutes {
    private final TenantService tenants;
    private final QuotaGuard quotas;
    private final Set<RuntimeKind> allowedRuntimes;

    TenantRoutes(TenantService tenants, QuotaGuard quotas, Set<RuntimeKind> allowedRuntimes) {
        this.tenants = tenants;
        this.quotas = quotas;
        this.allowedRuntimes = Set.copyOf(allowedRuntimes);
    }

    /**
     * {@code runtimes}: the runtimes the tenant's sandboxes may start in, among those the service runs (null: keep, or any);
     * the rates: the tenant's own (null: keep, or the operator's).
     */
    record QuotaBody(Integer runningSandboxes, Long memoryMb, Long diskMb, List<String> runtimes, Integer requestsPerSecond,
                     Integer requestBurst, Integer createsPerMinute) {
        TenantQuota quota(Set<RuntimeKind> serviceRuns) {
            Optional<Set<RuntimeKind>> kinds = Optional.ofNullable(runtimes).map(names -> {
                var parsed = EnumSet.noneOf(RuntimeKind.class);
                for (String name : names) {
                    var kind = RuntimeKind.parse("quota.runtimes", name);
                    if (!serviceRuns.contains(kind))
                        throw StasisException.invalid("quota.runtimes", kind + " does not run on this service; it runs "
                                + String.join(", ", RuntimeKind.wireNames(serviceRuns)));
                    parsed.add(kind);
                }
                return parsed;
            });
            return new TenantQuota(Optional.ofNullable(runningSandboxes), Optional.ofNullable(memoryMb), Optional.ofNullable(diskMb), kinds,
                    Optional.ofNullable(requestsPerSecond), Optional.ofNullable(requestBurst), Optional.ofNullable(createsPerMinute));
        }
    }

    record CreateTenant(String name, QuotaBody quota) {
    }

    record UpdateTenant(QuotaBody quota) {
    }

    /** A quota's fields; null where unlimited (runtimes: any the service runs; a rate: the operator's). */
    record QuotaView(Integer runningSandboxes, Long memoryMb, Long diskMb, List<String> runtimes, Integer requestsPerSecond,
                     Integer requestBurst, Integer createsPerMinute) {
        static QuotaView of(TenantQuota q) {
            return new QuotaView(q.runningSandboxes().orElse(null), q.memoryMb().orElse(null), q.diskMb().orElse(null),
                    q.runtimes().map(RuntimeKind::wireNames).orElse(null), q.requestsPerSecond().orElse(null),
                    q.requestBurst().orElse(null), q.createsPerMinute().orElse(null));
        }
    }

    record UsageView(int runningSandboxes, long memoryMb, long diskMb) {
        static UsageView of(TenantUsage u) {
            return new UsageView(u.runningSandboxes(), u.memoryMb(), u.diskMb());
        }
    }

    record TenantView(String id, String name, QuotaView quota, UsageView usage, Instant createdAt) {
    }

    /** {@code secret} only in the answer that issues the key. */
    record KeyView(String id, String tenantId, boolean root, Instant createdAt,
                   @JsonInclude(JsonInclude.Include.NON_NULL) String secret) {
        static KeyView of(ApiKey key, String secret) {
            return new KeyView(key.id(), key.tenant().value(), key.root(), key.createdAt(), secret);
        }
    }

    void register(RoutesConfig routes) {
        routes.post("/v1/tenants", this::create, Access.ROOT);
        routes.get("/v1/tenants", ctx -> ctx.json(new ListView<>(tenants.list().stream().map(this::view).toList(), null)), Access.ROOT);
        routes.get("/v1/tenants/{tid}", this::get, Access.TENANT);
        routes.patch("/v1/tenants/{tid}", this::update, Access.ROOT);
        routes.delete("/v1/tenants/{tid}", ctx -> {
            tenants.delete(ctx.pathParam("tid"));
            ctx.status(204);
        }, Access.ROOT);
        routes.post("/v1/tenants/{tid}/keys", ctx -> {
            Credentials.Issued issued = tenants.issueKey(ctx.pathParam("tid"), keyFormat(ctx));
            ctx.status(201).json(KeyView.of(issued.key(), issued.secret()));
        }, Access.ROOT);
        routes.get("/v1/tenants/{tid}/keys", ctx -> ctx.json(new ListView<>(
                tenants.keys(ctx.pathParam("tid")).stream().map(k -> KeyView.of(k, null)).toList(), null)), Access.ROOT);
        routes.delete("/v1/tenants/{tid}/keys/{kid}", ctx -> {
            tenants.revokeKey(ctx.pathParam("tid"), ctx.pathParam("kid"));
            ctx.status(204);
        }, Access.ROOT);
    }

    /** The body of a key's creation: the form of its secret ({@code stasis}, the default, or {@code e2b}). */
    private record CreateKey(String format) {
    }

    private static Credentials.KeyFormat keyFormat(Context ctx) {
        String format = Json.body(ctx, CreateKey.class).format();
        if (format == null || format.equals("stasis")) return Credentials.KeyFormat.STASIS;
        if (format.equals("e2b")) return Credentials.KeyFormat.E2B;
        throw StasisException.invalid("format", "must be \"stasis\" or \"e2b\", was \"" + format + "\"");
    }

    private void create(Context ctx) {
        var body = Json.body(ctx, CreateTenant.class);
        if (body.name() == null) throw StasisException.invalid("name", "is required");
        var quota = body.quota() == null ? TenantQuota.UNLIMITED : body.quota().quota(allowedRuntimes);
        ctx.status(201).json(view(tenants.create(body.name(), quota)));
    }

    /** The root key sees every tenant; a tenant's key sees its own only (others do not exist for it). */
    private void get(Context ctx) {
        String id = ctx.pathParam("tid");
        Caller caller = BearerAuth.caller(ctx);
        if (!caller.isRoot() && !caller.tenant().value().equals(id)) throw TenantService.notFound(id);
        ctx.json(view(tenants.get(id)));
    }

    private void update(Context ctx) {
        var body = Json.body(ctx, UpdateTenant.class);
        if (body.quota() == null) throw StasisException.invalid("quota", "is required: the quota fields to change");
        ctx.json(view(tenants.updateQuota(ctx.pathParam("tid"), body.quota().quota(allowedRuntimes))));
    }

    private TenantView view(Tenant t) {
        return new TenantView(t.id().value(), t.name(), QuotaView.of(t.quota()), UsageView.of(quotas.usage(t.id())), t.createdAt());
    }
}
