package io.stasis.core.secret;

import java.time.Instant;
import java.util.Objects;

/**
 * A secret as the API shows it: its name and when its value was last set. The value itself is
 * never part of this record; see {@link SecretService}.
 */
public record Secret(String name, Instant createdAt) {

    public Secret {
        SecretService.validateName(name, "name");
        Objects.requireNonNull(createdAt);
    }
}
