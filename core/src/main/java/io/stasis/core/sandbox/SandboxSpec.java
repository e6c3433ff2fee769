package io.stasis.core.sandbox;

import io.stasis.core.tenant.TenantId;
import io.stasis.core.network.NetworkPolicy;
import io.stasis.core.policy.LifecyclePolicy;
import java.util.Map;
import java.util.Optional;

/** What a caller asks for when creating a sandbox, already validated. {@code network}: empty for the service's default policy. */
public record SandboxSpec(
        String template,
        Optional<String> name,
        Map<String, String> env,
        Map<String, String> metadata,
        Resources resources,
        LifecyclePolicy lifecycle,
        Optional<NetworkPolicy> network,
        TenantId tenant) {

    public SandboxSpec {
        java.util.Objects.requireNonNull(tenant);
        name.ifPresent(SandboxName::validate);
        env = Map.copyOf(env);
        metadata = Map.copyOf(metadata);
    }
}
