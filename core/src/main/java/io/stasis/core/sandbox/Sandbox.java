package io.stasis.core.sandbox;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.policy.LifecyclePolicy;
import io.stasis.core.tenant.TenantId;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A sandbox as the catalog records it. Immutable; changes produce a new record.
 *
 * @param parentId     the sandbox it was forked from, if any
 * @param checkpointId the checkpoint it was forked from, if any
 * @param lifecycle    when it moves down the ladder while idle
 * @param tenant       whose it is
 */
public record Sandbox(
        SandboxId id,
        Optional<String> name,
        String template,
        SandboxState state,
        Instant createdAt,
        Resources resources,
        Map<String, String> env,
        Map<String, String> metadata,
        Optional<SandboxId> parentId,
        Optional<CheckpointId> checkpointId,
        LifecyclePolicy lifecycle,
        TenantId tenant) {

    public Sandbox {
        Objects.requireNonNull(id);
        Objects.requireNonNull(name);
        Objects.requireNonNull(template);
        Objects.requireNonNull(state);
        Objects.requireNonNull(createdAt);
        Objects.requireNonNull(resources);
        Objects.requireNonNull(parentId);
        Objects.requireNonNull(checkpointId);
        Objects.requireNonNull(lifecycle);
        Objects.requireNonNull(tenant);
        env = Map.copyOf(env);
        metadata = Map.copyOf(metadata);
    }

    public Sandbox withState(SandboxState newState) {
        return new Sandbox(id, name, template, newState, createdAt, resources, env, metadata, parentId, checkpointId, lifecycle, tenant);
    }

    public Sandbox withLifecycle(LifecyclePolicy policy) {
        return new Sandbox(id, name, template, state, createdAt, resources, env, metadata, parentId, checkpointId, policy, tenant);
    }

    /** How the sandbox is shown in messages: its name if it has one, else its id. */
    public String label() {
        return name.map(n -> n + " (" + id + ")").orElse(id.value());
    }
}
