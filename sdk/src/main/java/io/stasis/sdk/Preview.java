package io.stasis.sdk;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;

/**
 * A preview: one TCP port of a sandbox served over HTTP by the service's preview listener.
 *
 * @param id        {@code prv_...}
 * @param sandboxId the sandbox whose port it serves
 * @param port      the sandbox's TCP port
 * @param isPublic  true: no token needed; false: requests need {@link #token()}
 * @param url       the host-based URL, {@code http://3000-sbx-abc.localhost:7071/}
 * @param pathUrl   the path-based URL, {@code http://localhost:7071/preview/sbx_abc/3000/}
 * @param token     a private preview's token: only in the answer to its create (else null). Send it
 *                  as the {@code X-Stasis-Preview-Token} header, or open {@link #linkWithToken()}
 *                  once in a browser (it is exchanged for a cookie)
 * @param createdAt when it was created
 * @param expiresAt when it stops working, or null for never
 */
public record Preview(String id, String sandboxId, int port, @JsonProperty("public") boolean isPublic, String url, String pathUrl,
                      String token, Instant createdAt, Instant expiresAt) {
    /** The header that carries a private preview's token. */
    public static final String TOKEN_HEADER = "X-Stasis-Preview-Token";

    /** The URL with the token as a query parameter, for a browser (null without a token). */
    public String linkWithToken() {
        return token == null ? null : url + "?stasis_preview_token=" + token;
    }
}
