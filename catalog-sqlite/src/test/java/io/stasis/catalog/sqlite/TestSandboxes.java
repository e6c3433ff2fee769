package io.stasis.catalog.sqlite;

import io.stasis.core.checkpoint.Checkpoint;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.policy.LifecyclePolicy;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.tenant.TenantId;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/** Sandbox and checkpoint records for tests, with every field set to something ordinary unless a test says otherwise. */
final class TestSandboxes {
    static final Instant T0 = Instant.parse("2026-03-01T12:00:00.123456789Z");

    private TestSandboxes() {
    }

    /** A sandbox of the default tenant with no lineage and the default lifecycle. */
    static Sandbox sandbox(Optional<String> name, String template, SandboxState state, Instant createdAt, Resources resources,
                           Map<String, String> env, Map<String, String> metadata) {
        return new Sandbox(SandboxId.random(), name, template, state, createdAt, resources, env, metadata,
                Optional.empty(), Optional.empty(), LifecyclePolicy.DEFAULT, TenantId.DEFAULT);
    }

    static Sandbox running(Instant createdAt) {
        return sandbox(Optional.empty(), "tiny", SandboxState.RUNNING, createdAt, Resources.DEFAULT, Map.of(), Map.of());
    }

    static Sandbox named(String name) {
        return sandbox(Optional.of(name), "tiny", SandboxState.RUNNING, T0, Resources.DEFAULT, Map.of(), Map.of());
    }

    static Sandbox withMetadata(Instant createdAt, Map<String, String> metadata) {
        return sandbox(Optional.empty(), "tiny", SandboxState.RUNNING, createdAt, Resources.DEFAULT, Map.of(), metadata);
    }

    /** A running fork of {@code parent} from {@code checkpoint}. */
    static Sandbox forkOf(SandboxId parent, CheckpointId checkpoint, Instant createdAt) {
        return new Sandbox(SandboxId.random(), Optional.empty(), "tiny", SandboxState.RUNNING, createdAt, Resources.DEFAULT,
                Map.of(), Map.of(), Optional.of(parent), Optional.of(checkpoint), LifecyclePolicy.DEFAULT, TenantId.DEFAULT);
    }

    /** Every field of {@code s}, with {@code id} instead of its own. */
    static Sandbox withId(Sandbox s, SandboxId id) {
        return new Sandbox(id, s.name(), s.template(), s.state(), s.createdAt(), s.resources(), s.env(), s.metadata(),
                s.parentId(), s.checkpointId(), s.lifecycle(), s.tenant(), s.generation());
    }

    /** Every field of {@code s}, with {@code tenant} instead of its own. */
    static Sandbox inTenant(Sandbox s, TenantId tenant) {
        return new Sandbox(s.id(), s.name(), s.template(), s.state(), s.createdAt(), s.resources(), s.env(), s.metadata(),
                s.parentId(), s.checkpointId(), s.lifecycle(), tenant, s.generation());
    }

    static Checkpoint checkpoint(SandboxId sandbox, Instant createdAt) {
        return new Checkpoint(CheckpointId.random(), sandbox, Optional.empty(), true, Checkpoint.Purpose.USER, 4096, createdAt);
    }
}
