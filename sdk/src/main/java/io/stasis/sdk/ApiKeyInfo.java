package io.stasis.sdk;

import java.time.Instant;

/**
 * An API key as the service shows it.
 *
 * @param secret the key itself ({@code sk_...}): only in the answer of {@link Tenants#issueKey}, null elsewhere
 */
public record ApiKeyInfo(String id, String tenantId, boolean root, Instant createdAt, String secret) {
    @Override
    public String toString() {
        return "ApiKeyInfo[" + id + ", tenant " + tenantId + (secret == null ? "" : ", secret shown once") + "]";
    }
}
