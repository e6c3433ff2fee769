package io.stasis.server.http;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.javalin.config.RoutesConfig;
import io.stasis.core.auth.Caller;
import io.stasis.core.auth.Permission;
import io.stasis.server.auth.Access;
import io.stasis.server.auth.BearerAuth;
import io.stasis.server.http.TokenRoutes.ScopeView;
import java.util.List;

/**
 * {@code GET /v1/whoami}: what the credential sent is, for a client that must know what to offer
 * (the web console shows the operator's pages to the root key only, and opens a scoped token's
 * one sandbox). Any credential may ask, about itself only.
 */
final class CallerRoutes {
    /** {@code scope} and {@code permissions} for a scoped token only. */
    record CallerView(String credentialId, String kind, String tenantId, boolean root,
                      @JsonInclude(JsonInclude.Include.NON_NULL) ScopeView scope,
                      @JsonInclude(JsonInclude.Include.NON_NULL) List<String> permissions) {
        static CallerView of(Caller caller) {
            return switch (caller) {
                case Caller.Key key -> new CallerView(key.credentialId(), "key", key.tenant().value(), key.isRoot(), null, null);
                case Caller.Token token -> new CallerView(token.credentialId(), "token", token.tenant().value(), false,
                        ScopeView.of(token.token().scope()),
                        token.token().permissions().stream().map(Permission::wireName).sorted().toList());
            };
        }
    }

    void register(RoutesConfig routes) {
        routes.get("/v1/whoami", ctx -> ctx.json(CallerView.of(BearerAuth.caller(ctx))), Access.CALLER);
    }
}
