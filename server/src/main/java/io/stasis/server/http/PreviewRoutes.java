package io.stasis.server.http;

import io.stasis.server.auth.Access;
import io.stasis.server.auth.AccessGuard;
import io.stasis.core.sandbox.SandboxId;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.stasis.core.error.StasisException;
import io.stasis.core.preview.Preview;
import io.stasis.core.preview.PreviewService;
import io.stasis.server.http.Views.ListView;
import io.stasis.server.preview.PreviewUrls;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/** Previews of a sandbox's ports: create (the only answer that holds a private preview's token), list, get, revoke. */
final class PreviewRoutes {
    private final PreviewService previews;
    private final PreviewUrls urls;

    PreviewRoutes(PreviewService previews, PreviewUrls urls) {
        this.previews = previews;
        this.urls = urls;
    }

    /** The body of a create. {@code public} is a Java keyword, hence the rename. */
    record CreatePreview(Integer port, @JsonProperty("public") Boolean isPublic, Long ttlSeconds) {
    }

    /** The preview object; {@code token} only in the answer to a create of a private preview. */
    record PreviewView(String id, String sandboxId, int port, @JsonProperty("public") boolean isPublic, String url, String pathUrl,
                       @JsonInclude(JsonInclude.Include.NON_NULL) String token, Instant createdAt, Instant expiresAt) {
        static PreviewView of(Preview p, PreviewUrls urls, String token) {
            return new PreviewView(p.id().value(), p.sandboxId().value(), p.port(), p.isPublic(), urls.hostUrl(p.sandboxId(), p.port()),
                    urls.pathUrl(p.sandboxId(), p.port()), token, p.createdAt(), p.expiresAt().orElse(null));
        }
    }

    void register(RoutesConfig routes) {
        String base = "/v1/sandboxes/{id}/previews";
        routes.post(base, this::create, Access.PREVIEWS);
        routes.get(base, ctx -> ctx.json(new ListView<>(previews.list(sandboxId(ctx)).stream()
                .map(p -> PreviewView.of(p, urls, null)).toList(), null)), Access.SANDBOX_READ);
        routes.get(base + "/{pid}", ctx -> ctx.json(PreviewView.of(
                previews.get(sandboxId(ctx), ctx.pathParam("pid")), urls, null)), Access.SANDBOX_READ);
        routes.delete(base + "/{pid}", ctx -> {
            previews.delete(sandboxId(ctx), ctx.pathParam("pid"));
            ctx.status(204);
        }, Access.PREVIEWS);
    }

    private void create(Context ctx) {
        var id = sandboxId(ctx);
        var body = Json.body(ctx, CreatePreview.class);
        if (body.port() == null) throw StasisException.invalid("port", "is required: the sandbox's TCP port to expose (1-65535)");
        if (body.ttlSeconds() != null && body.ttlSeconds() <= 0)
            throw StasisException.invalid("ttlSeconds", "must be positive, or left out for no expiry");
        Optional<Duration> ttl = Optional.ofNullable(body.ttlSeconds()).map(Duration::ofSeconds);
        var created = previews.create(id, body.port(), Boolean.TRUE.equals(body.isPublic()), ttl);
        ctx.status(201).json(PreviewView.of(created.preview(), urls, created.token().orElse(null)));
    }

    private static SandboxId sandboxId(Context ctx) {
        return new SandboxId(AccessGuard.sandboxId(ctx));
    }
}
