package io.stasis.core.preview;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;

/** Preview tokens: 32 random bytes, base64url without padding (43 characters), stored as SHA-256 hex. */
public final class PreviewTokens {
    /** The length of every token this class issues; anything else is refused before hashing. */
    public static final int LENGTH = 43;
    private static final SecureRandom RANDOM = new SecureRandom();

    private PreviewTokens() {
    }

    static String issue() {
        byte[] bytes = new byte[32];
        RANDOM.nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    static String hash(String token) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK always has SHA-256", e);
        }
    }

    /** Compares hashes in constant time, so the time taken says nothing about how much of a guess was right. */
    static boolean matches(String presented, String expectedHash) {
        if (presented == null || presented.length() != LENGTH) return false;
        return MessageDigest.isEqual(hash(presented).getBytes(StandardCharsets.US_ASCII),
                expectedHash.getBytes(StandardCharsets.US_ASCII));
    }
}
