package io.stasis.core.secret;

import java.time.Instant;
import java.util.Arrays;
import java.util.Objects;

/**
 * A secret as the catalog stores it: its value sealed by {@link SecretCipher} (AES-GCM, the name as
 * associated data), so that the database alone does not reveal it.
 */
public record SealedSecret(String name, Instant createdAt, byte[] sealed) {

    public SealedSecret {
        Objects.requireNonNull(name);
        Objects.requireNonNull(createdAt);
        sealed = sealed.clone();
    }

    @Override
    public byte[] sealed() {
        return sealed.clone();
    }

    public Secret secret() {
        return new Secret(name, createdAt);
    }

    @Override
    public String toString() {
        return "SealedSecret[" + name + "]";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SealedSecret s && s.name.equals(name) && s.createdAt.equals(createdAt) && Arrays.equals(s.sealed, sealed);
    }

    @Override
    public int hashCode() {
        return name.hashCode();
    }
}
