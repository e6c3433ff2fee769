package io.stasis.core.tenant;

import io.stasis.core.sandbox.Ids;
import java.util.Objects;

/**
 * A tenant's id: {@code ten_} and 16 lowercase letters or digits, or {@link #DEFAULT}, the
 * operator's own tenant, which owns what the root key creates and everything made before tenants
 * existed.
 */
public record TenantId(String value) {
    public static final String PREFIX = "ten_";
    public static final TenantId DEFAULT = new TenantId("ten_default");

    public TenantId {
        Objects.requireNonNull(value, "value");
        if (!isValid(value)) throw new IllegalArgumentException("not a tenant id: " + value);
    }

    public static TenantId random() {
        return new TenantId(PREFIX + Ids.randomSuffix());
    }

    public static boolean isValid(String s) {
        return s != null && (s.equals("ten_default") || s.startsWith(PREFIX) && Ids.isSuffix(s.substring(PREFIX.length())));
    }

    @Override
    public String toString() {
        return value;
    }
}
