package io.stasis.core.sandbox;

import io.stasis.core.tenant.TenantId;
import io.stasis.core.network.NetworkPolicy;
import io.stasis.core.policy.LifecyclePolicy;
import java.util.Map;
import java.util.Optional;

/**
 * What a caller asks for when creating a sandbox, already validated. {@code network}: empty for the service's default policy;
 * {@code volumes}: the tenant's volumes it mounts (resolved and checked by {@code VolumeService.resolveMounts}).
 */
public record SandboxSpec(
        String template,
        Optional<String> name,
        Map<String, String> env,
        Map<String, String> metadata,
        Resources resources,
        LifecyclePolicy lifecycle,
        Optional<NetworkPolicy> network,
        TenantId tenant,
        java.util.List<io.stasis.core.volume.VolumeMount> volumes) {

    public SandboxSpec(String template, Optional<String> name, Map<String, String> env, Map<String, String> metadata, Resources resources,
                       LifecyclePolicy lifecycle, Optional<NetworkPolicy> network, TenantId tenant) {
        this(template, name, env, metadata, resources, lifecycle, network, tenant, java.util.List.of());
    }

    public SandboxSpec {
        volumes = java.util.List.copyOf(volumes);
        java.util.Objects.requireNonNull(tenant);
        name.ifPresent(SandboxName::validate);
        env = Map.copyOf(env);
        metadata = Map.copyOf(metadata);
    }
}
