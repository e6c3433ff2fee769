package io.stasis.core.secret;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Arrays;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Seals secret values for the catalog: AES-256-GCM with a random 96-bit nonce per value and the
 * secret's name as associated data (a sealed value moved to another name does not open). The key
 * lives in a file of its own (mode 0600) next to the database (the server's {@code SecretKeyFile}), so
 * a copied database alone does not leak the values; whoever has both has them.
 *
 * <p>Sealed layout: a version byte (1), the 12-byte nonce, then the ciphertext with its 16-byte tag.
 */
public final class SecretCipher {
    private static final int VERSION = 1;
    public static final int KEY_BYTES = 32;
    private static final int NONCE_BYTES = 12;
    private static final int TAG_BITS = 128;

    private final SecretKeySpec key;
    private final SecureRandom random = new SecureRandom();

    SecretCipher(byte[] key) {
        if (key.length != KEY_BYTES) throw new IllegalArgumentException("the secrets key must be " + KEY_BYTES + " bytes, was " + key.length);
        this.key = new SecretKeySpec(key, "AES");
    }

    /** A cipher with this key ({@value #KEY_BYTES} bytes; the server keeps it in a file of its own). */
    public static SecretCipher withKey(byte[] key) {
        return new SecretCipher(key.clone());
    }

    public byte[] seal(String name, String value) {
        byte[] nonce = new byte[NONCE_BYTES];
        random.nextBytes(nonce);
        byte[] plain = value.getBytes(StandardCharsets.UTF_8);
        try {
            Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
            cipher.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, nonce));
            cipher.updateAAD(name.getBytes(StandardCharsets.UTF_8));
            byte[] sealed = cipher.doFinal(plain);
            byte[] out = new byte[1 + NONCE_BYTES + sealed.length];
            out[0] = VERSION;
            System.arraycopy(nonce, 0, out, 1, NONCE_BYTES);
            System.arraycopy(sealed, 0, out, 1 + NONCE_BYTES, sealed.length);
            return out;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM is unavailable", e);
        } finally {
            Arrays.fill(plain, (byte) 0);
        }
    }

    /** @throws IllegalStateException if the value was sealed with another key or for another name, or is damaged */
    public String open(String name, byte[] sealed) {
        if (sealed.length < 1 + NONCE_BYTES + TAG_BITS / 8 || sealed[0] != VERSION)
            throw new IllegalStateException("secret '" + name + "' is not a sealed value of version " + VERSION);
        try {
            Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
            cipher.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, sealed, 1, NONCE_BYTES));
            cipher.updateAAD(name.getBytes(StandardCharsets.UTF_8));
            byte[] plain = cipher.doFinal(sealed, 1 + NONCE_BYTES, sealed.length - 1 - NONCE_BYTES);
            return new String(plain, StandardCharsets.UTF_8);
        } catch (AEADBadTagException e) {
            throw new IllegalStateException("secret '" + name + "' does not open with this service's key (another data directory's key, or damaged)", e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-GCM is unavailable", e);
        }
    }
}
