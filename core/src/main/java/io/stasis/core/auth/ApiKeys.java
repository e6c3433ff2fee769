package io.stasis.core.auth;

import io.stasis.core.sandbox.Ids;
import io.stasis.core.spi.Catalog;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Optional;

/** Issues and checks API keys. Secrets are random, 256 bits, and stored only as SHA-256 hashes. */
public final class ApiKeys {
    public static final String SECRET_PREFIX = "sk_";
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Catalog catalog;
    private final Clock clock;

    public ApiKeys(Catalog catalog, Clock clock) {
        this.catalog = catalog;
        this.clock = clock;
    }

    /** A new key and its secret; the secret exists only in the returned value. */
    public record Issued(ApiKey key, String secret) {
    }

    public Issued issueRoot() {
        byte[] bytes = new byte[32];
        RANDOM.nextBytes(bytes);
        String secret = SECRET_PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
        var key = new ApiKey("key_" + Ids.randomSuffix(), hash(secret), true, clock.instant());
        catalog.insertApiKey(key);
        return new Issued(key, secret);
    }

    /** The key a presented secret belongs to, if any. */
    public Optional<ApiKey> authenticate(String presented) {
        if (presented == null || !presented.startsWith(SECRET_PREFIX) || presented.length() > 200) return Optional.empty();
        return catalog.findApiKeyByHash(hash(presented));
    }

    static String hash(String secret) {
        try {
            var digest = MessageDigest.getInstance("SHA-256").digest(secret.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK always has SHA-256", e);
        }
    }
}
