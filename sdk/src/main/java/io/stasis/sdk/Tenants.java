package io.stasis.sdk;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Tenants and their API keys, from {@link StasisClient#tenants()}. Managed with the root key; a
 * tenant's own key may only {@link #get} its own tenant. Each tenant sees only its own sandboxes,
 * checkpoints, secrets, tokens and events.
 *
 * <pre>{@code
 * TenantInfo acme = root.tenants().create("acme", TenantQuota.unlimited().withRunningSandboxes(20));
 * ApiKeyInfo key = root.tenants().issueKey(acme.id());   // key.secret() is shown this once
 * try (var client = StasisClient.connect(url, key.secret())) { ... }
 * }</pre>
 */
public final class Tenants {
    private final HttpTransport transport;

    Tenants(HttpTransport transport) {
        this.transport = transport;
    }

    /**
     * @throws ConflictException       {@code name_taken}
     * @throws InvalidRequestException a name not of 1-63 lowercase letters, digits and hyphens
     * @throws ForbiddenException      not the root key
     */
    public TenantInfo create(String name, TenantQuota quota) {
        Objects.requireNonNull(name, "name");
        var body = quota == null ? Map.of("name", name) : Map.of("name", name, "quota", quota);
        return transport.json(transport.jsonCall("POST", "/v1/tenants", body), TenantInfo.class);
    }

    public List<TenantInfo> list() {
        Page.Body<TenantInfo> body = transport.page(transport.call("GET", "/v1/tenants"), TenantInfo.class);
        return body.items() == null ? List.of() : List.copyOf(body.items());
    }

    /** @throws NotFoundException {@code tenant_not_found} (also another tenant's, for a tenant's key) */
    public TenantInfo get(String tenantId) {
        return transport.json(transport.call("GET", path(tenantId)), TenantInfo.class);
    }

    /** Replaces the quota's non-null fields; lowering a limit below the usage refuses only new growth. */
    public TenantInfo updateQuota(String tenantId, TenantQuota change) {
        Objects.requireNonNull(change, "change");
        return transport.json(transport.jsonCall("PATCH", path(tenantId), Map.of("quota", change)), TenantInfo.class);
    }

    /**
     * Deletes the tenant with its keys, tokens and secrets.
     *
     * @throws ConflictException {@code invalid_state} while it has sandboxes or volumes, or for the default tenant
     */
    public void delete(String tenantId) {
        transport.discard(transport.call("DELETE", path(tenantId)));
    }

    /** A new key of the tenant; its {@link ApiKeyInfo#secret()} is in this answer only. */
    public ApiKeyInfo issueKey(String tenantId) {
        return transport.json(transport.jsonCall("POST", path(tenantId) + "/keys", Map.of()), ApiKeyInfo.class);
    }

    /** The tenant's keys, without their secrets. */
    public List<ApiKeyInfo> keys(String tenantId) {
        Page.Body<ApiKeyInfo> body = transport.page(transport.call("GET", path(tenantId) + "/keys"), ApiKeyInfo.class);
        return body.items() == null ? List.of() : List.copyOf(body.items());
    }

    /** Revokes a key: the next request with it is refused. */
    public void revokeKey(String tenantId, String keyId) {
        transport.discard(transport.call("DELETE", path(tenantId) + "/keys/" + Query.encode(keyId)));
    }

    private static String path(String tenantId) {
        return "/v1/tenants/" + Query.encode(Objects.requireNonNull(tenantId, "tenantId"));
    }
}
