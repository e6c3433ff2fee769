package io.stasis.core.spi;

import io.stasis.core.secret.SealedSecret;
import io.stasis.core.tenant.TenantId;
import java.util.List;
import java.util.Optional;

/**
 * Secrets per tenant, their values sealed by the caller ({@code SecretCipher}). Writes are atomic
 * and durable when the call returns; thread-safe.
 */
public interface SecretCatalog {
    /** Stores a secret, replacing the value of the tenant's one with the same name; returns whether it is new. */
    boolean putSecret(TenantId tenant, SealedSecret secret);

    Optional<SealedSecret> findSecret(TenantId tenant, String name);

    /** The tenant's secrets, by name. */
    List<SealedSecret> secretsOf(TenantId tenant);

    /** Forgets a tenant's secret; returns whether it existed. */
    boolean deleteSecret(TenantId tenant, String name);
}
