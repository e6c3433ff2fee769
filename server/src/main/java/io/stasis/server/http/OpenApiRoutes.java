package io.stasis.server.http;

import io.stasis.server.auth.Access;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * {@code GET /v1/openapi.yaml}: the hand-kept OpenAPI 3.1 description of this API
 * ({@code openapi.yaml} on the classpath). It needs no key, like {@code /healthz}: it describes
 * the API, not anyone's sandboxes, and tools (Swagger UI, client generators) fetch it without one.
 */
final class OpenApiRoutes {
    static final String PATH = "/v1/openapi.yaml";
    private static final String RESOURCE = "/openapi.yaml";

    private final byte[] spec;

    OpenApiRoutes() {
        try (InputStream in = OpenApiRoutes.class.getResourceAsStream(RESOURCE)) {
            if (in == null) throw new IllegalStateException(RESOURCE + " is missing from the server's classpath");
            spec = in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + RESOURCE, e);
        }
    }

    /** Whether a request under {@code /v1} is for the spec, which is served without authentication. */
    static boolean isPublic(Context ctx) {
        return PATH.equals(ctx.path());
    }

    void register(RoutesConfig routes) {
        routes.get(PATH, ctx -> ctx.contentType("application/yaml; charset=utf-8").result(spec), Access.PUBLIC);
    }
}
