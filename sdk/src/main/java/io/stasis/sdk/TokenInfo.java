package io.stasis.sdk;

import java.time.Instant;
import java.util.List;

/**
 * A scoped token as the service shows it.
 *
 * @param scope       the one sandbox or volume it is for
 * @param permissions what it may do there ({@code exec}, {@code files:read}...)
 * @param token       the secret ({@code st_...}): only in the answer of {@link Tokens#issue}, null elsewhere
 */
public record TokenInfo(String id, String name, Scope scope, List<String> permissions, Instant createdAt, Instant expiresAt,
                        String token) {
    /** Exactly one field is set. */
    public record Scope(String sandbox, String volume) {
    }

    @Override
    public String toString() {
        return "TokenInfo[" + id + ", " + scope + ", " + permissions + (token == null ? "" : ", secret shown once") + "]";
    }
}
