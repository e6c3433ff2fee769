package io.stasis.core.auth;

import java.time.Instant;
import java.util.Objects;

/**
 * A stored API key. Only a hash of the secret is kept; the secret itself is shown once.
 *
 * @param id         public id of the key ({@code key_...}), safe to log
 * @param secretHash hex SHA-256 of the secret
 * @param root       whether it is the operator's root key
 */
public record ApiKey(String id, String secretHash, boolean root, Instant createdAt) {
    public ApiKey {
        Objects.requireNonNull(id);
        Objects.requireNonNull(secretHash);
        Objects.requireNonNull(createdAt);
    }
}
