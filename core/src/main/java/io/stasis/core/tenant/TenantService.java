package io.stasis.core.tenant;

import io.stasis.core.auth.ApiKey;
import io.stasis.core.auth.Credentials;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxQuery;
import io.stasis.core.spi.Catalog;
import io.stasis.core.spi.VolumeCatalog;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tenants and their API keys, managed with the root key. A tenant's resources are invisible to
 * every other tenant; its quota bounds what it holds at once ({@link QuotaGuard}).
 */
public final class TenantService {
    private static final Logger log = LoggerFactory.getLogger(TenantService.class);

    private final Catalog catalog;
    private final VolumeCatalog volumes;
    private final Credentials credentials;
    private final Clock clock;

    public TenantService(Catalog catalog, VolumeCatalog volumes, Credentials credentials, Clock clock) {
        this.catalog = catalog;
        this.volumes = volumes;
        this.credentials = credentials;
        this.clock = clock;
    }

    /** @throws StasisException {@code name_taken} if a tenant has this name */
    public Tenant create(String name, TenantQuota quota) {
        var tenant = new Tenant(TenantId.random(), name, quota, clock.instant());
        catalog.insertTenant(tenant);
        log.atInfo().addKeyValue("tenant", tenant.id()).addKeyValue("name", name).log("tenant created");
        return tenant;
    }

    public List<Tenant> list() {
        return catalog.allTenants();
    }

    public Tenant get(String id) {
        if (!TenantId.isValid(id)) throw notFound(id);
        return catalog.findTenant(new TenantId(id)).orElseThrow(() -> notFound(id));
    }

    /** Replaces the quota's fields that {@code change} has; lowering a limit below the usage stops only new growth. */
    public Tenant updateQuota(String id, TenantQuota change) {
        var tenant = get(id);
        var updated = tenant.withQuota(tenant.quota().with(change));
        catalog.updateTenant(updated);
        log.atInfo().addKeyValue("tenant", tenant.id()).addKeyValue("quota", updated.quota()).log("tenant quota changed");
        return updated;
    }

    /**
     * Deletes a tenant with its keys, tokens and secrets.
     * <p>On failure: {@code invalid_state} for the default tenant, or while the tenant has sandboxes
     * or volumes.
     */
    public void delete(String id) {
        var tenant = get(id);
        if (tenant.id().equals(TenantId.DEFAULT)) throw new StasisException(ErrorCode.INVALID_STATE, "the default tenant cannot be deleted");
        if (!catalog.deleteTenantIfEmpty(tenant.id())) throw notEmpty(tenant.id());
        log.atInfo().addKeyValue("tenant", tenant.id()).log("tenant deleted");
    }

    /** The catalog only says no; naming what the tenant still holds tells the caller what to delete first. */
    private StasisException notEmpty(TenantId tenant) {
        boolean hasVolumes = !volumes.volumesOf(tenant).isEmpty();
        // Without volumes it is sandboxes (those being deleted count too, and list() leaves them out).
        boolean hasSandboxes = !hasVolumes || !catalog.list(new SandboxQuery(Optional.empty(), Map.of(), Optional.empty(), 1,
                Optional.of(tenant))).items().isEmpty();
        String holds = hasSandboxes && hasVolumes ? "sandboxes and volumes" : hasVolumes ? "volumes" : "sandboxes";
        return new StasisException(ErrorCode.INVALID_STATE, "tenant " + tenant.value() + " still has " + holds + "; delete them first",
                Map.of("tenant", tenant.value()));
    }

    public Credentials.Issued issueKey(String tenantId) {
        return issueKey(tenantId, Credentials.KeyFormat.STASIS);
    }

    /** A key of the tenant with its secret in {@code format}. */
    public Credentials.Issued issueKey(String tenantId, Credentials.KeyFormat format) {
        var tenant = get(tenantId);
        var issued = credentials.issueKey(tenant.id(), format);
        log.atInfo().addKeyValue("tenant", tenant.id()).addKeyValue("key", issued.key().id()).addKeyValue("format", format).log("API key issued");
        return issued;
    }

    public List<ApiKey> keys(String tenantId) {
        return catalog.apiKeysOf(get(tenantId).id());
    }

    /** Revokes a tenant's key: the next request presenting it is refused. The root key cannot be revoked. */
    public void revokeKey(String tenantId, String keyId) {
        var tenant = get(tenantId);
        var key = catalog.apiKeysOf(tenant.id()).stream().filter(k -> k.id().equals(keyId)).findFirst()
                .orElseThrow(() -> new StasisException(ErrorCode.KEY_NOT_FOUND, "tenant " + tenantId + " has no key '" + keyId + "'",
                        Map.of("key", keyId)));
        if (key.root()) throw new StasisException(ErrorCode.INVALID_STATE, "the root key cannot be revoked through the API; delete its file (root.key in the data dir) and restart to replace it");
        catalog.deleteApiKey(key.id());
        log.atInfo().addKeyValue("tenant", tenant.id()).addKeyValue("key", keyId).log("API key revoked");
    }

    public static StasisException notFound(String id) {
        return new StasisException(ErrorCode.TENANT_NOT_FOUND, "no tenant '" + id + "'", Map.of("tenant", id));
    }
}
