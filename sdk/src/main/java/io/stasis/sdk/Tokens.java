package io.stasis.sdk;

import java.util.List;
import java.util.Objects;

/**
 * Scoped tokens of the caller's tenant, from {@link StasisClient#tokens()}: hand one to a program
 * that should do only some things with one sandbox. Issued, listed and revoked with an API key.
 * Outside its scope a token finds nothing (404); inside, a call needing a permission it lacks is
 * refused with {@link ForbiddenException}.
 */
public final class Tokens {
    private final HttpTransport transport;

    Tokens(HttpTransport transport) {
        this.transport = transport;
    }

    /**
     * Issues a token; its {@link TokenInfo#token()} secret is in this answer only.
     *
     * @throws InvalidRequestException no permissions, one unknown or not for the scope, a ttl out of range
     * @throws NotFoundException       the tenant has no such sandbox
     */
    public TokenInfo issue(TokenRequest request) {
        Objects.requireNonNull(request, "request");
        return transport.json(transport.jsonCall("POST", "/v1/tokens", request), TokenInfo.class);
    }

    /** The tenant's tokens that have not expired, without their secrets. */
    public List<TokenInfo> list() {
        Page.Body<TokenInfo> body = transport.page(transport.call("GET", "/v1/tokens"), TokenInfo.class);
        return body.items() == null ? List.of() : List.copyOf(body.items());
    }

    public TokenInfo get(String tokenId) {
        return transport.json(transport.call("GET", "/v1/tokens/" + Query.encode(tokenId)), TokenInfo.class);
    }

    /** Revokes a token: the next request with it is refused. */
    public void revoke(String tokenId) {
        transport.discard(transport.call("DELETE", "/v1/tokens/" + Query.encode(tokenId)));
    }
}
