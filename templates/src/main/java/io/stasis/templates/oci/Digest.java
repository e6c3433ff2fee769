package io.stasis.templates.oci;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.regex.Pattern;

/**
 * A content digest as images name blobs, {@code sha256:<64 lowercase hex>}: the only algorithm
 * accepted (OCI's {@code sha512} and others are refused as unsupported, never skipped).
 */
public record Digest(String hex) {
    private static final Pattern HEX = Pattern.compile("[a-f0-9]{64}");
    private static final Pattern ANY = Pattern.compile("[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]+");

    public Digest {
        if (hex == null || !HEX.matcher(hex).matches()) throw new IllegalArgumentException("not a sha256 hex digest: " + hex);
    }

    /**
     * Parses {@code sha256:...}; anything else is an {@link ImageException} naming {@code subject}
     * (malformed, or unsupported for a well-formed digest of another algorithm).
     */
    public static Digest parse(String text, String subject) {
        if (text != null && text.startsWith("sha256:") && HEX.matcher(text.substring(7)).matches()) return new Digest(text.substring(7));
        if (text != null && !text.startsWith("sha256:") && ANY.matcher(text).matches())
            throw ImageException.unsupported(subject, "digest " + text + " uses an algorithm other than sha256");
        throw ImageException.malformed(subject, "'" + shorten(text) + "' is not a digest");
    }

    /** The sha256 of {@code bytes}. */
    public static Digest of(byte[] bytes) {
        return new Digest(HexFormat.of().formatHex(sha256().digest(bytes)));
    }

    static Digest of(MessageDigest finished) {
        return new Digest(HexFormat.of().formatHex(finished.digest()));
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
    }

    /** {@code sha256:<hex>}. */
    @Override
    public String toString() {
        return "sha256:" + hex;
    }

    /** The first 12 hex digits, for names and logs. */
    public String shortHex() {
        return hex.substring(0, 12);
    }

    private static String shorten(String s) {
        if (s == null) return "null";
        return s.length() > 80 ? s.substring(0, 80) + "..." : s;
    }
}
