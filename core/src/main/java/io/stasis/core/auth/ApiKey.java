package io.stasis.core.auth;

import io.stasis.core.tenant.TenantId;
import java.time.Instant;
import java.util.Objects;

/**
 * A stored API key. Only a hash of the secret is kept; the secret itself is shown once.
 *
 * @param id         public id of the key ({@code key_...}), safe to log
 * @param tenant     whose key it is; the root key's is {@link TenantId#DEFAULT}
 * @param secretHash hex SHA-256 of the secret
 * @param root       whether it is the operator's root key, which also manages tenants
 */
public record ApiKey(String id, TenantId tenant, String secretHash, boolean root, Instant createdAt) {
    public ApiKey {
        Objects.requireNonNull(id);
        Objects.requireNonNull(tenant);
        Objects.requireNonNull(secretHash);
        Objects.requireNonNull(createdAt);
        if (root && !tenant.equals(TenantId.DEFAULT)) throw new IllegalArgumentException("the root key belongs to the default tenant");
    }
}
