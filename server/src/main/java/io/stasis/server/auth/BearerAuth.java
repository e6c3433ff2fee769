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
    private static final String SUBPROTOCOL_PREFIX = "bearer.";

    private final Credentials credentials;

    public BearerAuth(Credentials credentials) {
        this.credentials = credentials;
    }

    public void authenticate(Context ctx) {
        ctx.attribute(ATTRIBUTE, authenticate(ctx.header("Authorization")));
    }

    /**
     * A WebSocket upgrade: the {@code Authorization} header, or from a browser, which cannot set
     * headers on a WebSocket, the subprotocol {@code bearer.<credential>} offered after
     * {@code stasis} (the server answers with the first offered, {@code stasis}, never the
     * credential). Never a query parameter: URLs end up in histories and logs.
     */
    public void authenticateUpgrade(Context ctx) {
        ctx.attribute(ATTRIBUTE, authenticate(authorizationOfUpgrade(ctx.header("Authorization"), ctx.header("Sec-WebSocket-Protocol"))));
    }

    /**
     * The {@code Authorization} value an upgrade's credential amounts to, from the header or the
     * subprotocols; null when it has neither (also what a relay to another node sends on).
     */
    public static String authorizationOfUpgrade(String authorization, String subprotocols) {
        if (authorization != null) return authorization;
        return fromSubprotocols(subprotocols).map(c -> PREFIX + c).orElse(null);
    }

    private static Optional<String> fromSubprotocols(String offered) {
        if (offered == null) return Optional.empty();
        for (String protocol : offered.split(",")) {
            String p = protocol.strip();
            if (p.startsWith(SUBPROTOCOL_PREFIX) && p.length() > SUBPROTOCOL_PREFIX.length()) return Optional.of(p.substring(SUBPROTOCOL_PREFIX.length()));
        }
        return Optional.empty();
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
