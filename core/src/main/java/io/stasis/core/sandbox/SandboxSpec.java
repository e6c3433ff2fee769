package io.stasis.core.sandbox;

import io.stasis.core.bucket.SandboxBucket;
import io.stasis.core.network.NetworkPolicy;
import io.stasis.core.policy.LifecyclePolicy;
import io.stasis.core.tenant.TenantId;
import io.stasis.core.volume.VolumeMount;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What a caller asks for when creating a sandbox, already validated. {@code network}: empty for the service's default policy;
 * {@code volumes}: the tenant's volumes it mounts (resolved and checked by {@code VolumeService.resolveMounts});
 * {@code buckets}: the S3 buckets it mounts (checked by {@code SandboxBuckets.resolve});
 * {@code runtime}: which runtime runs it (allowed to the tenant, checked by the caller).
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
        List<VolumeMount> volumes,
        List<SandboxBucket> buckets,
        RuntimeKind runtime) {

    public SandboxSpec(String template, Optional<String> name, Map<String, String> env, Map<String, String> metadata, Resources resources,
                       LifecyclePolicy lifecycle, Optional<NetworkPolicy> network, TenantId tenant) {
        this(template, name, env, metadata, resources, lifecycle, network, tenant, List.of(), List.of(), RuntimeKind.RUNC);
    }

    public SandboxSpec(String template, Optional<String> name, Map<String, String> env, Map<String, String> metadata, Resources resources,
                       LifecyclePolicy lifecycle, Optional<NetworkPolicy> network, TenantId tenant,
                       List<VolumeMount> volumes) {
        this(template, name, env, metadata, resources, lifecycle, network, tenant, volumes, List.of(), RuntimeKind.RUNC);
    }

    public SandboxSpec {
        volumes = List.copyOf(volumes);
        buckets = List.copyOf(buckets);
        Objects.requireNonNull(tenant);
        Objects.requireNonNull(runtime);
        name.ifPresent(SandboxName::validate);
        env = Map.copyOf(env);
        metadata = Map.copyOf(metadata);
    }
}
