package io.stasis.core.tenant;

import io.stasis.core.error.StasisException;
import java.time.Instant;
import java.util.Objects;
import java.util.regex.Pattern;

/** A customer of the service: it owns sandboxes, checkpoints, secrets and events, and sees no one else's. */
public record Tenant(TenantId id, String name, TenantQuota quota, Instant createdAt) {
    private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9-]{0,62}");

    public Tenant {
        Objects.requireNonNull(id);
        Objects.requireNonNull(quota);
        Objects.requireNonNull(createdAt);
        validateName(name);
    }

    public static void validateName(String name) {
        if (name == null || !NAME.matcher(name).matches())
            throw StasisException.invalid("name", "a tenant name is 1-63 lowercase letters, digits and hyphens, starting with a letter or digit");
    }

    public Tenant withQuota(TenantQuota newQuota) {
        return new Tenant(id, name, newQuota, createdAt);
    }
}
