package io.stasis.server.auth;

import io.javalin.http.Context;
import io.stasis.core.auth.ApiKey;
import io.stasis.core.auth.ApiKeys;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;

/**
 * Checks {@code Authorization: Bearer <key>} on every API call. The key itself is never logged;
 * only its public id is kept on the request.
 */
public final class BearerAuth {
    private static final String PREFIX = "Bearer ";
    private static final String ATTRIBUTE = "stasis.apiKey";

    private final ApiKeys keys;

    public BearerAuth(ApiKeys keys) {
        this.keys = keys;
    }

    public void authenticate(Context ctx) {
        ctx.attribute(ATTRIBUTE, authenticate(ctx.header("Authorization")));
    }

    /** The key of an {@code Authorization} header's value; {@code unauthenticated} when it names none. */
    public ApiKey authenticate(String header) {
        if (header == null || header.isBlank())
            throw new StasisException(ErrorCode.UNAUTHENTICATED, "missing Authorization header: send 'Authorization: Bearer <api key>'");
        if (!header.regionMatches(true, 0, PREFIX, 0, PREFIX.length()))
            throw new StasisException(ErrorCode.UNAUTHENTICATED, "the Authorization header must use the Bearer scheme");
        return keys.authenticate(header.substring(PREFIX.length()).strip())
                .orElseThrow(() -> new StasisException(ErrorCode.UNAUTHENTICATED, "unknown API key"));
    }

    public static String keyId(Context ctx) {
        ApiKey key = ctx.attribute(ATTRIBUTE);
        return key == null ? "-" : key.id();
    }
}
