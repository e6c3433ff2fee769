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
 * @param generation   how many times its live state has changed since it was made (1 at first):
 *                     every change of state (pause, standby, resume, hibernate, stop, start, also by
 *                     the idle policy or a restart's reconciliation) and every checkpoint of it
 *                     (forks included) adds one. It never goes down, so a caller that remembers it
 *                     can tell an older state from the one it left.
 * @param runtime      which runtime runs it (its forks and checkpoints keep it)
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
        TenantId tenant,
        long generation,
        RuntimeKind runtime) {

    /** A sandbox as first recorded: generation 1. */
    public Sandbox(SandboxId id, Optional<String> name, String template, SandboxState state, Instant createdAt, Resources resources,
                   Map<String, String> env, Map<String, String> metadata, Optional<SandboxId> parentId,
                   Optional<CheckpointId> checkpointId, LifecyclePolicy lifecycle, TenantId tenant, RuntimeKind runtime) {
        this(id, name, template, state, createdAt, resources, env, metadata, parentId, checkpointId, lifecycle, tenant, 1, runtime);
    }

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
        Objects.requireNonNull(runtime);
        if (generation < 1) throw new IllegalArgumentException("generation must be 1 or more, was " + generation);
        env = Map.copyOf(env);
        metadata = Map.copyOf(metadata);
    }

    /** In {@code newState}; a new generation unless it already was in that state. */
    public Sandbox withState(SandboxState newState) {
        long next = newState.equals(state) ? generation : generation + 1;
        return new Sandbox(id, name, template, newState, createdAt, resources, env, metadata, parentId, checkpointId, lifecycle, tenant, next, runtime);
    }

    /** The next generation, in the same state: a checkpoint was taken of it. */
    public Sandbox nextGeneration() {
        return new Sandbox(id, name, template, state, createdAt, resources, env, metadata, parentId, checkpointId, lifecycle, tenant, generation + 1, runtime);
    }

    public Sandbox withLifecycle(LifecyclePolicy policy) {
        return new Sandbox(id, name, template, state, createdAt, resources, env, metadata, parentId, checkpointId, policy, tenant, generation, runtime);
    }

    /** How the sandbox is shown in messages: its name if it has one, else its id. */
    public String label() {
        return name.map(n -> n + " (" + id + ")").orElse(id.value());
    }
}
