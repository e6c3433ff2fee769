package io.stasis.core.blob;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.regex.Pattern;

/** SHA-256 and its lowercase hex form, shared by chunk and manifest ids and the template build cache's keys. */
public final class Sha256 {
    static final int BYTES = 32;
    static final Pattern HEX = Pattern.compile("[0-9a-f]{64}");
    private static final HexFormat FORMAT = HexFormat.of();

    private Sha256() {
    }

    static MessageDigest digest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    /** The hex digest of {@code text}'s UTF-8 bytes. */
    public static String ofText(String text) {
        byte[] bytes = text.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        return hex(bytes, 0, bytes.length);
    }

    public static String hex(byte[] data, int offset, int length) {
        var md = digest();
        md.update(data, offset, length);
        return FORMAT.formatHex(md.digest());
    }

    static String hex(byte[] digest) {
        if (digest.length != BYTES) throw new IllegalArgumentException("a SHA-256 digest has 32 bytes, not " + digest.length);
        return FORMAT.formatHex(digest);
    }

    static byte[] bytes(String hex) {
        return FORMAT.parseHex(hex);
    }

    static String check(String hex, String what) {
        if (hex == null || !HEX.matcher(hex).matches())
            throw new IllegalArgumentException(what + " must be 64 lowercase hex digits (SHA-256), was '" + hex + "'");
        return hex;
    }
}
