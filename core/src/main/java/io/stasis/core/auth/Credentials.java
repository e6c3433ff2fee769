package io.stasis.core.auth;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.Ids;
import io.stasis.core.spi.CredentialCatalog;
import io.stasis.core.tenant.TenantId;
import java.time.Clock;
import java.util.Map;
import java.util.Optional;

/**
 * Issues API keys and tells who a presented secret belongs to: an API key ({@code sk_...}) or a
 * scoped token ({@code st_...}). Every check reads the catalog, so a revoked key or token stops
 * working with the next request.
 */
public final class Credentials {
    public static final String KEY_PREFIX = "sk_";
    public static final String TOKEN_PREFIX = "st_";
    /** Keys in E2B's form, for its SDKs (some check a key's form before sending it). */
    public static final String E2B_KEY_PREFIX = "e2b_";

    /** The form of a key's secret: Stasis's own ({@code sk_} and base64url), or E2B's ({@code e2b_} and 40 hex digits). */
    public enum KeyFormat {
        STASIS, E2B
    }

    private final CredentialCatalog catalog;
    private final Clock clock;

    public Credentials(CredentialCatalog catalog, Clock clock) {
        this.catalog = catalog;
        this.clock = clock;
    }

    /** A new key and its secret; the secret exists only in the returned value. */
    public record Issued(ApiKey key, String secret) {
        @Override
        public String toString() {
            return "Issued[" + key.id() + "]";
        }
    }

    public Issued issueRoot() {
        return issue(TenantId.DEFAULT, true);
    }

    /**
     * Makes {@code secret}, one an operator kept (a root key file a deployment hands every node),
     * the root key; {@code invalid_request} unless it has the form of the keys this service issues.
     */
    public ApiKey adoptRoot(String secret) {
        if (!secret.startsWith(KEY_PREFIX) || secret.length() < KEY_PREFIX.length() + 32 || secret.length() > CredentialSecrets.MAX_LENGTH
                || !secret.substring(KEY_PREFIX.length()).matches("[A-Za-z0-9_-]+"))
            throw StasisException.invalid("rootKey", "a root key is " + KEY_PREFIX + " and at least 32 of A-Z a-z 0-9 _ -");
        var key = new ApiKey("key_" + Ids.randomSuffix(), TenantId.DEFAULT, CredentialSecrets.hash(secret), true, clock.instant());
        catalog.insertApiKey(key);
        return key;
    }

    /** A key of a tenant: it may do everything with the tenant's resources. */
    public Issued issueKey(TenantId tenant) {
        return issueKey(tenant, KeyFormat.STASIS);
    }

    /** A key of a tenant, its secret in the given form; both forms work on every route. */
    public Issued issueKey(TenantId tenant, KeyFormat format) {
        return issue(tenant, false, format);
    }

    private Issued issue(TenantId tenant, boolean root) {
        return issue(tenant, root, KeyFormat.STASIS);
    }

    private Issued issue(TenantId tenant, boolean root, KeyFormat format) {
        String secret = format == KeyFormat.E2B ? CredentialSecrets.generateHex(E2B_KEY_PREFIX) : CredentialSecrets.generate(KEY_PREFIX);
        var key = new ApiKey("key_" + Ids.randomSuffix(), tenant, CredentialSecrets.hash(secret), root, clock.instant());
        catalog.insertApiKey(key);
        return new Issued(key, secret);
    }

    /**
     * The caller a presented secret stands for, if any.
     *
     * @throws StasisException {@code unauthenticated} for a token that has expired (one revoked is simply unknown)
     */
    public Optional<Caller> authenticate(String presented) {
        if (presented == null || presented.length() > CredentialSecrets.MAX_LENGTH) return Optional.empty();
        if (presented.startsWith(KEY_PREFIX) || presented.startsWith(E2B_KEY_PREFIX))
            return catalog.findApiKeyByHash(CredentialSecrets.hash(presented)).map(Caller.Key::new);
        if (presented.startsWith(TOKEN_PREFIX)) {
            var token = catalog.findTokenByHash(CredentialSecrets.hash(presented));
            if (token.isPresent() && token.get().expiredAt(clock.instant()))
                throw new StasisException(ErrorCode.UNAUTHENTICATED, "token " + token.get().id() + " expired at " + token.get().expiresAt(),
                        Map.of("token", token.get().id()));
            return token.map(Caller.Token::new);
        }
        return Optional.empty();
    }
}
