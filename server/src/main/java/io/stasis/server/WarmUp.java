package io.stasis.server;

import io.stasis.core.lifecycle.SandboxService;
import io.stasis.core.sandbox.SandboxQuery;
import io.stasis.core.tenant.Tenant;
import io.stasis.core.tenant.TenantQuota;
import io.stasis.core.tenant.TenantService;
import io.stasis.sdk.CreateSandboxRequest;
import io.stasis.sdk.RetryPolicy;
import io.stasis.sdk.StasisClient;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The last step of a start, before the service says it listens: one pass through the calls an
 * agent makes first (create, exec, files, get, list, pause, standby, resume, delete), over HTTP to itself,
 * so that the first real calls do not pay for loading, linking and initializing their code paths.
 * Measured without it: the first create after a start took 7x a later one, a first list of files
 * 2.3x, a first exec 1.9x. The calls that take CRIU's time (hibernate, checkpoint, fork) were
 * within 1.5x already and are left out, which keeps the pass to a few hundred milliseconds.
 *
 * <p>It works as a tenant of its own, made for the pass and deleted after it, so nothing of it
 * shows in any other tenant's sandboxes, events or names; only the request and create metrics
 * count its calls. A start killed during the pass leaves that tenant behind: the next pass removes
 * it first. A pass that fails is logged and never stops the service.
 */
final class WarmUp {
    private static final Logger log = LoggerFactory.getLogger(WarmUp.class);
    private static final String TENANT_PREFIX = "stasis-warm-up-";

    /**
     * The tenant of a node's pass, one per node, so that nodes starting together on a shared catalog
     * leave each other's alone; no other tenant may take this name while a pass runs.
     */
    static String tenantOf(String node) {
        String name = TENANT_PREFIX + node.toLowerCase(java.util.Locale.ROOT).replaceAll("[^a-z0-9-]", "-");
        // A tenant's name has at most 63 characters: a long node name keeps its start and a hash of the whole.
        return name.length() <= 63 ? name : name.substring(0, 54) + "-" + "%08x".formatted(node.hashCode());
    }

    private WarmUp() {
    }

    static void run(String url, String node, TenantService tenants, SandboxService sandboxes, String template) {
        long start = System.nanoTime();
        String tenantName = tenantOf(node);
        try {
            removeLeftovers(tenantName, tenants, sandboxes);
            Tenant tenant = tenants.create(tenantName, TenantQuota.UNLIMITED);
            try {
                pass(url, tenants.issueKey(tenant.id().value()).secret(), template);
            } finally {
                removeLeftovers(tenantName, tenants, sandboxes);
            }
            log.atInfo().addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("warm-up done");
        } catch (RuntimeException e) {
            log.atWarn().addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).setCause(e)
                    .log("warm-up failed; the first calls may be slower");
        }
    }

    private static void pass(String url, String key, String template) {
        try (var client = StasisClient.builder().url(url).apiKey(key).retryPolicy(RetryPolicy.none())
                .requestTimeout(Duration.ofMinutes(1)).build()) {
            var sandbox = client.sandboxes().create(CreateSandboxRequest.builder().template(template).name("warm-up").build());
            try {
                sandbox.exec("true");
                sandbox.files().write("/tmp/warm-up.txt", "warm-up\n");
                sandbox.files().read("/tmp/warm-up.txt");
                sandbox.files().stat("/tmp/warm-up.txt");
                sandbox.files().list("/tmp");
                client.sandboxes().get(sandbox.id());
                client.sandboxes().list();
                sandbox.pause();
                sandbox.resume();
                sandbox.standby();
                sandbox.resume();
            } finally {
                sandbox.delete();
            }
        }
    }

    /** The pass's tenant and its sandboxes, from this start or one that was killed during its pass. */
    private static void removeLeftovers(String tenantName, TenantService tenants, SandboxService sandboxes) {
        for (Tenant tenant : tenants.list()) {
            if (!tenant.name().equals(tenantName)) continue;
            var query = new SandboxQuery(Optional.empty(), Map.of(), Optional.empty(), SandboxQuery.MAX_LIMIT, Optional.of(tenant.id()));
            for (var sandbox : sandboxes.list(query).items()) sandboxes.delete(sandbox.id().value());
            tenants.delete(tenant.id().value());
        }
    }
}
