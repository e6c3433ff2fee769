package io.stasis.server.http;

import io.stasis.server.auth.Access;
import io.stasis.server.auth.BearerAuth;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.stasis.core.error.StasisException;
import io.stasis.core.secret.Secret;
import io.stasis.core.secret.SecretService;
import io.stasis.server.http.Views.ListView;
import java.time.Instant;

/**
 * Secrets, write-only: set (create or replace a value), list by name, delete. No answer ever holds
 * a value, and no log line either (request bodies are not logged).
 */
final class SecretRoutes {
    private final SecretService secrets;

    SecretRoutes(SecretService secrets) {
        this.secrets = secrets;
    }

    /** The body of a set. */
    record SetSecret(String name, String value) {
        @Override
        public String toString() {
            return "SetSecret[" + name + "]";
        }
    }

    /** A secret as answers show it: never its value. */
    record SecretView(String name, Instant createdAt) {
        static SecretView of(Secret s) {
            return new SecretView(s.name(), s.createdAt());
        }
    }

    void register(RoutesConfig routes) {
        routes.post("/v1/secrets", this::set, Access.TENANT);
        routes.get("/v1/secrets", ctx -> ctx.json(new ListView<>(secrets.list(BearerAuth.caller(ctx).tenant()).stream().map(SecretView::of).toList(), null)), Access.TENANT);
        routes.delete("/v1/secrets/{name}", ctx -> {
            secrets.delete(BearerAuth.caller(ctx).tenant(), ctx.pathParam("name"));
            ctx.status(204);
        }, Access.TENANT);
    }

    private void set(Context ctx) {
        var body = Json.body(ctx, SetSecret.class);
        if (body.name() == null) throw StasisException.invalid("name", "is required");
        if (body.value() == null) throw StasisException.invalid("value", "is required");
        var stored = secrets.put(BearerAuth.caller(ctx).tenant(), body.name(), body.value());
        ctx.status(stored.created() ? 201 : 200).json(SecretView.of(stored.secret()));
    }
}
