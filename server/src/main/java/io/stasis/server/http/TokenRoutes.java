package io.stasis.server.http;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.stasis.core.auth.Permission;
import io.stasis.core.auth.ScopedToken;
import io.stasis.core.auth.TokenScope;
import io.stasis.core.auth.TokenService;
import io.stasis.core.error.StasisException;
import io.stasis.core.lifecycle.SandboxService;
import io.stasis.core.tenant.TenantId;
import io.stasis.core.volume.VolumeId;
import io.stasis.core.volume.VolumeService;
import io.stasis.server.auth.Access;
import io.stasis.server.auth.BearerAuth;
import io.stasis.server.http.Views.ListView;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;

/** Scoped tokens of the caller's tenant: issued, listed and revoked with an API key, never with a token. */
final class TokenRoutes {
    private final TokenService tokens;
    private final SandboxService sandboxes;

    private final VolumeService volumes;

    TokenRoutes(TokenService tokens, SandboxService sandboxes, VolumeService volumes) {
        this.tokens = tokens;
        this.sandboxes = sandboxes;
        this.volumes = volumes;
    }

    /** Exactly one of the two. */
    record ScopeBody(String sandbox, String volume) {
    }

    record CreateToken(ScopeBody scope, List<String> permissions, Long ttlSeconds, String name) {
    }

    record ScopeView(String sandbox, String volume) {
        static ScopeView of(TokenScope scope) {
            return switch (scope) {
                case TokenScope.Sandbox s -> new ScopeView(s.id().value(), null);
                case TokenScope.Volume v -> new ScopeView(null, v.id());
            };
        }
    }

    /** {@code token} (the secret) only in the answer that issues it. */
    record TokenView(String id, String name, ScopeView scope, List<String> permissions, Instant createdAt, Instant expiresAt,
                     @JsonInclude(JsonInclude.Include.NON_NULL) String token) {
        static TokenView of(ScopedToken t, String secret) {
            return new TokenView(t.id(), t.name().orElse(null), ScopeView.of(t.scope()),
                    t.permissions().stream().map(Permission::wireName).sorted().toList(), t.createdAt(), t.expiresAt(), secret);
        }
    }

    void register(RoutesConfig routes) {
        routes.post("/v1/tokens", this::issue, Access.TENANT);
        routes.get("/v1/tokens", ctx -> ctx.json(new ListView<>(
                tokens.list(BearerAuth.caller(ctx).tenant()).stream().map(t -> TokenView.of(t, null)).toList(), null)), Access.TENANT);
        routes.get("/v1/tokens/{tokenId}", ctx -> ctx.json(TokenView.of(
                tokens.get(BearerAuth.caller(ctx).tenant(), ctx.pathParam("tokenId")), null)), Access.TENANT);
        routes.delete("/v1/tokens/{tokenId}", ctx -> {
            tokens.revoke(BearerAuth.caller(ctx).tenant(), ctx.pathParam("tokenId"));
            ctx.status(204);
        }, Access.TENANT);
    }

    /** A volume named by name is resolved in the caller's tenant too; an id is checked by the token service. */
    private String volumeId(TenantId tenant, String ref) {
        if (volumes == null || VolumeId.isValid(ref)) return ref;
        return volumes.get(tenant, ref).id().value();
    }

    private void issue(Context ctx) {
        var body = Json.body(ctx, CreateToken.class);
        var tenant = BearerAuth.caller(ctx).tenant();
        if (body.scope() == null) throw StasisException.invalid("scope", "is required: {\"sandbox\": id} or {\"volume\": id}");
        if ((body.scope().sandbox() == null) == (body.scope().volume() == null))
            throw StasisException.invalid("scope", "name exactly one of sandbox and volume");
        // A sandbox named by name is resolved in the caller's tenant; the token holds its id.
        TokenScope scope = body.scope().sandbox() != null
                ? new TokenScope.Sandbox(sandboxes.get(tenant, body.scope().sandbox()).id())
                : new TokenScope.Volume(volumeId(tenant, body.scope().volume()));
        if (body.permissions() == null) throw StasisException.invalid("permissions", "is required: what the token may do");
        var permissions = EnumSet.noneOf(Permission.class);
        for (String p : body.permissions()) permissions.add(Permission.parse(p, "permissions"));
        if (body.ttlSeconds() != null && body.ttlSeconds() <= 0) throw StasisException.invalid("ttlSeconds", "must be positive");
        var issued = tokens.issue(tenant, scope, permissions, Optional.ofNullable(body.ttlSeconds()).map(Duration::ofSeconds),
                Optional.ofNullable(body.name()));
        ctx.status(201).json(TokenView.of(issued.token(), issued.secret()));
    }
}
