package io.stasis.core.sandbox;

import io.stasis.core.tenant.TenantId;
import io.stasis.core.network.NetworkPolicy;
import io.stasis.core.policy.LifecyclePolicy;
import java.util.Map;
import java.util.Optional;

/**
 * What a caller asks for when creating a sandbox, already validated. {@code network}: empty for the service's default policy;
 * {@code volumes}: the tenant's volumes it mounts (resolved and checked by {@code VolumeService.resolveMounts});
 * {@code buckets}: the S3 buckets it mounts (checked by {@code SandboxBuckets.resolve}).
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
        java.util.List<io.stasis.core.volume.VolumeMount> volumes,
        java.util.List<io.stasis.core.bucket.SandboxBucket> buckets) {

    public SandboxSpec(String template, Optional<String> name, Map<String, String> env, Map<String, String> metadata, Resources resources,
                       LifecyclePolicy lifecycle, Optional<NetworkPolicy> network, TenantId tenant) {
        this(template, name, env, metadata, resources, lifecycle, network, tenant, java.util.List.of(), java.util.List.of());
    }

    public SandboxSpec(String template, Optional<String> name, Map<String, String> env, Map<String, String> metadata, Resources resources,
                       LifecyclePolicy lifecycle, Optional<NetworkPolicy> network, TenantId tenant,
                       java.util.List<io.stasis.core.volume.VolumeMount> volumes) {
        this(template, name, env, metadata, resources, lifecycle, network, tenant, volumes, java.util.List.of());
    }

    public SandboxSpec {
        volumes = java.util.List.copyOf(volumes);
        buckets = java.util.List.copyOf(buckets);
        java.util.Objects.requireNonNull(tenant);
        name.ifPresent(SandboxName::validate);
        env = Map.copyOf(env);
        metadata = Map.copyOf(metadata);
    }
}
