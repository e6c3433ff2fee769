package io.stasis.core.auth;

import io.stasis.core.tenant.TenantId;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * A token that may do only what its permissions allow, on one sandbox or volume, until it expires
 * or is revoked. Stored hashed like API keys; the secret ({@code st_...}) is shown once.
 *
 * @param id         public id ({@code tok_...}), safe to log
 * @param secretHash hex SHA-256 of the secret
 */
public record ScopedToken(String id, TenantId tenant, String secretHash, Optional<String> name, TokenScope scope,
                          Set<Permission> permissions, Instant createdAt, Instant expiresAt) {
    public ScopedToken {
        Objects.requireNonNull(id);
        Objects.requireNonNull(tenant);
        Objects.requireNonNull(secretHash);
        Objects.requireNonNull(name);
        Objects.requireNonNull(scope);
        Objects.requireNonNull(createdAt);
        Objects.requireNonNull(expiresAt);
        permissions = Set.copyOf(permissions);
    }

    public boolean expiredAt(Instant now) {
        return !now.isBefore(expiresAt);
    }
}
