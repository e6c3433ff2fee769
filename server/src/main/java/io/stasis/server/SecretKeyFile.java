package io.stasis.server;

import io.stasis.core.secret.SecretCipher;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;

/**
 * The file that holds the key secrets are sealed with (SecretCipher), next to the database and
 * apart from it (mode 0600), so that a copied database alone does not reveal them.
 */
final class SecretKeyFile {
    private SecretKeyFile() {
    }

    /**
     * The key in {@code keyFile}, created (random, mode 0600) if the file does not exist; two
     * services creating it at once end up with the same one.
     *
     * @throws UncheckedIOException naming the file if it cannot be read or written, or has the wrong size
     */
    static SecretCipher loadOrCreate(Path keyFile) {
        try {
            if (!Files.exists(keyFile)) {
                byte[] fresh = new byte[SecretCipher.KEY_BYTES];
                new SecureRandom().nextBytes(fresh);
                Path tmp = keyFile.resolveSibling(keyFile.getFileName() + ".tmp");
                Files.deleteIfExists(tmp);
                Files.createFile(tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
                Files.write(tmp, fresh, StandardOpenOption.WRITE, StandardOpenOption.SYNC);
                try {
                    Files.createLink(keyFile, tmp); // never replaces a key another process created meanwhile
                } catch (FileAlreadyExistsException raced) {
                    // the other one's key wins
                } finally {
                    Files.delete(tmp);
                }
            }
            byte[] key = Files.readAllBytes(keyFile);
            if (key.length != SecretCipher.KEY_BYTES)
                throw new IOException("the secrets key file has " + key.length + " bytes, not " + SecretCipher.KEY_BYTES + ": it is damaged");
            return SecretCipher.withKey(key);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot load the secrets key " + keyFile, e);
        }
    }
}
