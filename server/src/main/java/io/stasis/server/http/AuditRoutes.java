package io.stasis.server.http;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.stasis.core.audit.AuditEntry;
import io.stasis.core.audit.AuditQuery;
import io.stasis.core.error.StasisException;
import io.stasis.core.spi.AuditLog;
import io.stasis.core.tenant.TenantId;
import io.stasis.server.auth.Access;
import io.stasis.server.auth.BearerAuth;
import io.stasis.server.http.Views.ListView;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Optional;

/** {@code GET /v1/audit}: the audit log, newest first; a tenant's key sees its own entries, the root key everyone's. */
final class AuditRoutes {
    private static final int DEFAULT_LIMIT = 100;

    private final AuditLog audit;

    AuditRoutes(AuditLog audit) {
        this.audit = audit;
    }

    void register(RoutesConfig routes) {
        routes.get("/v1/audit", this::page, Access.TENANT);
    }

    /** An entry as the API shows it: the fields of its kind, absent ones left out. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record AuditView(Instant at, String kind, String tenant, String credentialId, Boolean root, String method, String route, String path,
                     String resource, Integer status, String outcome, String requestId, String sandbox, String decision, String domain,
                     String address, Integer port, String protocol, String rule) {
        static AuditView of(AuditEntry entry) {
            String tenant = entry.tenant().map(TenantId::value).orElse(null);
            return switch (entry) {
                case AuditEntry.Call c -> new AuditView(c.at(), c.kind(), tenant, c.credentialId().orElse(null), c.root() ? true : null,
                        c.method(), c.route(), c.path(), c.resource().orElse(null), c.status(), c.outcome(), c.requestId(),
                        null, null, null, null, null, null, null);
                case AuditEntry.Egress e -> new AuditView(e.at(), e.kind(), tenant, null, null, null, null, null, null, null, null, null,
                        e.sandbox().value(), e.allowed() ? "allowed" : "denied", e.domain().orElse(null), e.address().orElse(null),
                        e.port(), e.protocol(), e.rule());
            };
        }
    }

    private void page(Context ctx) {
        var caller = BearerAuth.caller(ctx);
        Optional<TenantId> tenant = caller.isRoot()
                ? Query.string(ctx, "tenant").map(t -> {
                    if (!TenantId.isValid(t)) throw StasisException.invalid("tenant", "not a tenant id: '" + t + "'");
                    return new TenantId(t);
                })
                : Optional.of(caller.tenant());
        var query = new AuditQuery(tenant, Query.string(ctx, "kind"), time(ctx, "since"), time(ctx, "until"), Query.string(ctx, "sandbox"),
                Query.string(ctx, "credential"), Query.integer(ctx, "limit", DEFAULT_LIMIT), Query.string(ctx, "cursor"));
        var page = audit.query(query);
        ctx.json(new ListView<>(page.items().stream().map(AuditView::of).toList(), page.nextCursor().orElse(null)));
    }

    private static Optional<Instant> time(Context ctx, String name) {
        return Query.string(ctx, name).map(text -> {
            try {
                return Instant.parse(text);
            } catch (DateTimeParseException e) {
                throw StasisException.invalid(name, "an RFC 3339 UTC time such as 2026-12-05T12:00:00Z, was '" + text + "'");
            }
        });
    }
}
