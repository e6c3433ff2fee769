package io.stasis.server.auth;

import io.javalin.http.Context;
import io.stasis.core.auth.Caller;
import io.stasis.core.auth.Credentials;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import java.util.Optional;

/**
 * Checks {@code Authorization: Bearer <key or token>} on every API call. The secret itself is
 * never logged; only the public id of its key or token is kept on the request.
 */
public final class BearerAuth {
    private static final String PREFIX = "Bearer ";
    private static final String ATTRIBUTE = "stasis.caller";

    private final Credentials credentials;

    public BearerAuth(Credentials credentials) {
        this.credentials = credentials;
    }

    public void authenticate(Context ctx) {
        ctx.attribute(ATTRIBUTE, authenticate(ctx.header("Authorization")));
    }

    /** The caller of an {@code Authorization} header's value; {@code unauthenticated} when it names none. */
    public Caller authenticate(String header) {
        if (header == null || header.isBlank())
            throw new StasisException(ErrorCode.UNAUTHENTICATED, "missing Authorization header: send 'Authorization: Bearer <api key>'");
        if (!header.regionMatches(true, 0, PREFIX, 0, PREFIX.length()))
            throw new StasisException(ErrorCode.UNAUTHENTICATED, "the Authorization header must use the Bearer scheme");
        return credentials.authenticate(header.substring(PREFIX.length()).strip())
                .orElseThrow(() -> new StasisException(ErrorCode.UNAUTHENTICATED, "unknown API key or token (revoked, or never issued)"));
    }

    /** The authenticated caller of the request. */
    public static Caller caller(Context ctx) {
        Caller caller = ctx.attribute(ATTRIBUTE);
        if (caller == null) throw new StasisException(ErrorCode.UNAUTHENTICATED, "missing Authorization header");
        return caller;
    }

    /** The request's caller, if it presented a credential the service knows. */
    public static Optional<Caller> callerIf(Context ctx) {
        return Optional.ofNullable(ctx.attribute(ATTRIBUTE));
    }

    /** The public id of the request's key or token, for logs. */
    public static String credentialId(Context ctx) {
        Caller caller = ctx.attribute(ATTRIBUTE);
        return caller == null ? "-" : caller.credentialId();
    }
}
