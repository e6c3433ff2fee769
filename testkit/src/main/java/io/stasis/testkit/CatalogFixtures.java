package io.stasis.testkit;

import io.stasis.core.sandbox.RuntimeKind;
import io.stasis.core.auth.ApiKey;
import io.stasis.core.auth.Permission;
import io.stasis.core.auth.ScopedToken;
import io.stasis.core.auth.TokenScope;
import io.stasis.core.checkpoint.Checkpoint;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.policy.LifecyclePolicy;
import io.stasis.core.preview.Preview;
import io.stasis.core.preview.PreviewId;
import io.stasis.core.sandbox.Ids;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.tenant.Tenant;
import io.stasis.core.tenant.TenantId;
import io.stasis.core.tenant.TenantQuota;
import io.stasis.core.volume.Volume;
import io.stasis.core.volume.VolumeId;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Catalog records for tests, with every field set to something ordinary unless a test says
 * otherwise: what the catalog suites and the SQLite adapter's own tests build their rows from.
 */
public final class CatalogFixtures {
    /** An instant with every fraction digit set, so that a store losing precision shows. */
    public static final Instant T0 = Instant.parse("2026-03-01T12:00:00.123456789Z");

    private CatalogFixtures() {
    }

    /** A sandbox of the default tenant with no lineage and the default lifecycle. */
    public static Sandbox sandbox(Optional<String> name, String template, SandboxState state, Instant createdAt, Resources resources,
                                  Map<String, String> env, Map<String, String> metadata) {
        return new Sandbox(SandboxId.random(), name, template, state, createdAt, resources, env, metadata,
                Optional.empty(), Optional.empty(), LifecyclePolicy.DEFAULT, TenantId.DEFAULT, RuntimeKind.RUNC);
    }

    public static Sandbox running(Instant createdAt) {
        return sandbox(Optional.empty(), "tiny", SandboxState.RUNNING, createdAt, Resources.DEFAULT, Map.of(), Map.of());
    }

    public static Sandbox named(String name) {
        return sandbox(Optional.of(name), "tiny", SandboxState.RUNNING, T0, Resources.DEFAULT, Map.of(), Map.of());
    }

    public static Sandbox withMetadata(Instant createdAt, Map<String, String> metadata) {
        return sandbox(Optional.empty(), "tiny", SandboxState.RUNNING, createdAt, Resources.DEFAULT, Map.of(), metadata);
    }

    /** A running fork of {@code parent} from {@code checkpoint}. */
    public static Sandbox forkOf(SandboxId parent, CheckpointId checkpoint, Instant createdAt) {
        return new Sandbox(SandboxId.random(), Optional.empty(), "tiny", SandboxState.RUNNING, createdAt, Resources.DEFAULT,
                Map.of(), Map.of(), Optional.of(parent), Optional.of(checkpoint), LifecyclePolicy.DEFAULT, TenantId.DEFAULT, RuntimeKind.RUNC);
    }

    /** Every field of {@code s}, with {@code id} instead of its own. */
    public static Sandbox withId(Sandbox s, SandboxId id) {
        return new Sandbox(id, s.name(), s.template(), s.state(), s.createdAt(), s.resources(), s.env(), s.metadata(),
                s.parentId(), s.checkpointId(), s.lifecycle(), s.tenant(), s.generation(), RuntimeKind.RUNC);
    }

    /** Every field of {@code s}, with {@code name} instead of its own. */
    public static Sandbox withName(Sandbox s, Optional<String> name) {
        return new Sandbox(s.id(), name, s.template(), s.state(), s.createdAt(), s.resources(), s.env(), s.metadata(),
                s.parentId(), s.checkpointId(), s.lifecycle(), s.tenant(), s.generation(), RuntimeKind.RUNC);
    }

    /** Every field of {@code s}, with {@code tenant} instead of its own. */
    public static Sandbox inTenant(Sandbox s, TenantId tenant) {
        return new Sandbox(s.id(), s.name(), s.template(), s.state(), s.createdAt(), s.resources(), s.env(), s.metadata(),
                s.parentId(), s.checkpointId(), s.lifecycle(), tenant, s.generation(), RuntimeKind.RUNC);
    }

    /** A sandbox of {@code tenant} in {@code state} with these limits. */
    public static Sandbox ofTenant(TenantId tenant, SandboxState state, int memoryMb, int diskMb, Instant createdAt) {
        return inTenant(sandbox(Optional.empty(), "tiny", state, createdAt, new Resources(1.0, memoryMb, 512, diskMb), Map.of(), Map.of()),
                tenant);
    }

    public static Checkpoint checkpoint(SandboxId sandbox, Instant createdAt) {
        return new Checkpoint(CheckpointId.random(), sandbox, Optional.empty(), true, Checkpoint.Purpose.USER, 4096, createdAt, RuntimeKind.RUNC);
    }

    /** A checkpoint with a fixed id (for orders that ties on the creation time decide by id). */
    public static Checkpoint checkpoint(String id, SandboxId sandbox, Instant createdAt) {
        return new Checkpoint(new CheckpointId(id), sandbox, Optional.empty(), false, Checkpoint.Purpose.USER, 0, createdAt, RuntimeKind.RUNC);
    }

    /** A tenant with no limits and a fresh id. */
    public static Tenant tenant(String name, Instant createdAt) {
        return new Tenant(TenantId.random(), name, TenantQuota.UNLIMITED, createdAt);
    }

    /** A tenant's ordinary (not root) key with a random id and secret hash. */
    public static ApiKey key(TenantId tenant, Instant createdAt) {
        return new ApiKey("key_" + Ids.randomSuffix(), tenant, Ids.randomSuffix().repeat(4), false, createdAt);
    }

    /** A token allowed to read, with a random id and secret hash. */
    public static ScopedToken token(TenantId tenant, TokenScope scope, Instant createdAt, Instant expiresAt) {
        return new ScopedToken("tok_" + Ids.randomSuffix(), tenant, Ids.randomSuffix().repeat(4), Optional.empty(), scope,
                Set.of(Permission.SANDBOX_READ), createdAt, expiresAt);
    }

    /** A token on one sandbox, valid for an hour from {@link #T0}. */
    public static ScopedToken sandboxToken(TenantId tenant, SandboxId sandbox) {
        return token(tenant, new TokenScope.Sandbox(sandbox), T0, T0.plusSeconds(3600));
    }

    /** A private preview of {@code port}, expiring a minute after it was made. */
    public static Preview privatePreview(SandboxId sandbox, int port, Instant createdAt) {
        return new Preview(PreviewId.random(), sandbox, port, false, Optional.of("ab".repeat(32)), createdAt,
                Optional.of(createdAt.plusSeconds(60)));
    }

    /** An empty volume of 64 MiB. */
    public static Volume volume(TenantId tenant, String name, Instant createdAt) {
        return new Volume(VolumeId.random(), tenant, name, 64, createdAt, Optional.empty());
    }
}
