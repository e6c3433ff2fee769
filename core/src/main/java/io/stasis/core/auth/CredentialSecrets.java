package io.stasis.core.auth;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;

/** Secrets of keys and tokens: 256 random bits behind a prefix that says which, kept only as SHA-256. */
final class CredentialSecrets {
    private static final SecureRandom RANDOM = new SecureRandom();
    /** Longer than any secret issued, so a huge header costs no hashing. */
    static final int MAX_LENGTH = 200;

    private CredentialSecrets() {
    }

    static String generate(String prefix) {
        byte[] bytes = new byte[32];
        RANDOM.nextBytes(bytes);
        return prefix + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    /** {@code prefix} and 160 random bits as 40 lowercase hex digits: E2B's form of a key. */
    static String generateHex(String prefix) {
        byte[] bytes = new byte[20];
        RANDOM.nextBytes(bytes);
        return prefix + HexFormat.of().formatHex(bytes);
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
