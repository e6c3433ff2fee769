package io.stasis.core.spi;

import io.stasis.core.auth.ApiKey;
import io.stasis.core.auth.ScopedToken;
import io.stasis.core.tenant.TenantId;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * API keys and scoped tokens, found by the hash of their secret. Writes are atomic and durable when
 * the call returns; thread-safe.
 */
public interface CredentialCatalog {
    void insertApiKey(ApiKey key);

    /** The key with this hash of its secret. */
    Optional<ApiKey> findApiKeyByHash(String secretHash);

    /** Whether a root key exists (created on the first start). */
    boolean hasRootKey();

    /** A tenant's keys, oldest first. */
    List<ApiKey> apiKeysOf(TenantId tenant);

    /** Forgets a key. Idempotent. */
    void deleteApiKey(String id);

    void insertToken(ScopedToken token);

    /** The token with this hash of its secret, expired or not. */
    Optional<ScopedToken> findTokenByHash(String secretHash);

    Optional<ScopedToken> findToken(String id);

    /** A tenant's tokens, oldest first. */
    List<ScopedToken> tokensOf(TenantId tenant);

    /** Forgets a token. Idempotent. */
    void deleteToken(String id);

    /** Forgets tokens that expired before {@code now}. */
    void deleteTokensExpiredBefore(Instant now);
}
