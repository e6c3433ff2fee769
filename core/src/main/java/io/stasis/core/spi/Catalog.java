package io.stasis.core.spi;

import io.stasis.core.auth.ApiKey;
import io.stasis.core.auth.ScopedToken;
import io.stasis.core.checkpoint.Checkpoint;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.checkpoint.CheckpointUpload;
import io.stasis.core.checkpoint.DurableImage;
import io.stasis.core.events.Event;
import io.stasis.core.journal.Operation;
import io.stasis.core.network.SandboxNetwork;
import io.stasis.core.preview.Preview;
import io.stasis.core.preview.PreviewId;
import io.stasis.core.sandbox.Page;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxQuery;
import io.stasis.core.secret.SealedSecret;
import io.stasis.core.tenant.Tenant;
import io.stasis.core.tenant.TenantId;
import io.stasis.core.tenant.TenantUsage;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Durable metadata: sandboxes, checkpoints, operations in progress, events and API keys. Writes
 * are atomic and durable when the call returns. Implementations are thread-safe.
 */
public interface Catalog extends AutoCloseable {

    /** Records a new sandbox. {@code name_taken} if its name is in use. */
    void insert(Sandbox sandbox);

    /** Replaces a sandbox's record (same id). */
    void update(Sandbox sandbox);

    Optional<Sandbox> find(SandboxId id);

    /** The tenant's sandbox with this name (names are unique within a tenant). */
    Optional<Sandbox> findByName(TenantId tenant, String name);

    /** A page of sandboxes, oldest first, filtered as the query says. Sandboxes being deleted are left out. */
    Page<Sandbox> list(SandboxQuery query);

    /** Every sandbox record, including those being deleted (for reconciliation). */
    List<Sandbox> all();

    /** Sandboxes forked from {@code parent}, oldest first. */
    List<Sandbox> children(SandboxId parent);

    /** Forgets a sandbox (its operation too). Idempotent. */
    void delete(SandboxId id);

    // --- operations in progress: at most one per sandbox ---

    /** Records that an operation begins (replacing a finished one's leftover). */
    void beginOperation(Operation operation);

    /** Records the outcome and ends the sandbox's operation, in one transaction. */
    void completeOperation(Sandbox outcome);

    /** Ends the sandbox's operation without changing the sandbox (it failed and nothing changed). */
    void abandonOperation(SandboxId sandbox);

    List<Operation> pendingOperations();

    // --- networks: a row per sandbox with a network, removed by delete(id) with the sandbox ---

    /** Records a sandbox's network; {@code invalid_state} if its slot is taken. */
    void insertNetwork(SandboxNetwork network);

    /** Replaces a sandbox's network policy (same id and slot). */
    void updateNetwork(SandboxNetwork network);

    Optional<SandboxNetwork> findNetwork(SandboxId id);

    List<SandboxNetwork> allNetworks();

    /** Forgets a network whose sandbox is gone (reconciliation). Idempotent. */
    void deleteNetwork(SandboxId id);

    // --- checkpoints ---

    void insertCheckpoint(Checkpoint checkpoint);

    Optional<Checkpoint> findCheckpoint(CheckpointId id);

    /** A sandbox's checkpoints, oldest first. */
    List<Checkpoint> checkpointsOf(SandboxId sandbox);

    List<Checkpoint> allCheckpoints();

    /** Forgets a checkpoint. Idempotent. */
    void deleteCheckpoint(CheckpointId id);

    /** Records how many forks of the checkpoint to keep restored ahead (0: none). Nothing if the checkpoint is gone. */
    void setCheckpointSpares(CheckpointId id, int count);

    /** The checkpoints that want spares, and how many each. */
    Map<CheckpointId, Integer> checkpointSpares();

    /** Records where a checkpoint's upload to the durable store stands, replacing what was recorded. */
    void recordUpload(CheckpointUpload upload);

    Optional<CheckpointUpload> findUpload(CheckpointId id);

    /**
     * Records the sandbox's newest durable checkpoint: kept only if it was taken no earlier than the
     * one recorded (uploads may end out of order). Forgotten with the sandbox.
     */
    void recordDurableImage(SandboxId sandbox, DurableImage image);

    /** The sandbox's newest durable checkpoint, if it has had one. */
    Optional<DurableImage> durableImage(SandboxId sandbox);

    /** Every recorded upload (for the list of checkpoints and the reconciler). */
    List<CheckpointUpload> allUploads();

    /** Forgets a checkpoint's upload. Idempotent. */
    void deleteUpload(CheckpointId id);

    // --- events ---

    /** Stores an event, giving it the next id; returns it with that id. */
    Event appendEvent(Event event);

    /**
     * Events with an id above {@code afterId}, oldest first, of one sandbox or all; with a tenant,
     * only that tenant's events and those of no sandbox (see {@link Event#visibleTo}).
     */
    List<Event> eventsAfter(long afterId, Optional<SandboxId> sandbox, Optional<TenantId> tenant, int limit);

    // --- keys ---

    void insertApiKey(ApiKey key);

    /** The key with this hash of its secret. */
    Optional<ApiKey> findApiKeyByHash(String secretHash);

    /** Whether a root key exists (created on the first start). */
    boolean hasRootKey();

    /** A tenant's keys, oldest first. */
    List<ApiKey> apiKeysOf(TenantId tenant);

    /** Forgets a key. Idempotent. */
    void deleteApiKey(String id);

    // --- tenants: the default tenant exists from the start ---

    /** Records a tenant; {@code name_taken} if its name is in use. */
    void insertTenant(Tenant tenant);

    void updateTenant(Tenant tenant);

    Optional<Tenant> findTenant(TenantId id);

    /** Every tenant, oldest first. */
    List<Tenant> allTenants();

    /**
     * Deletes a tenant with its keys, tokens and secrets, in one transaction, unless it has
     * sandboxes (checked in the same transaction) or is the default tenant. Returns whether it was deleted.
     */
    boolean deleteTenantIfEmpty(TenantId id);

    /** What the tenant holds, counted as its quota counts (sandboxes being deleted hold nothing). */
    TenantUsage usage(TenantId tenant);

    // --- scoped tokens ---

    void insertToken(ScopedToken token);

    /** The token with this hash of its secret, expired or not. */
    Optional<ScopedToken> findTokenByHash(String secretHash);

    Optional<ScopedToken> findToken(String id);

    /** A tenant's tokens, oldest first. */
    List<ScopedToken> tokensOf(TenantId tenant);

    /** Forgets a token. Idempotent. */
    void deleteToken(String id);

    /** Forgets tokens that expired before {@code now}. */
    void deleteTokensExpiredBefore(Instant now);

    // --- previews ---

    /**
     * Records a preview, unless its sandbox is gone or being deleted (checked in the same
     * transaction, so no preview outlives its sandbox). Returns whether it was recorded.
     * {@link #delete} removes a sandbox's previews with it.
     */
    boolean insertPreview(Preview preview);

    Optional<Preview> findPreview(PreviewId id);

    /** A sandbox's previews, oldest first. */
    List<Preview> previewsOf(SandboxId sandbox);

    /** Forgets a preview. Idempotent. */
    void deletePreview(PreviewId id);

    @Override
    void close();

    // --- secrets: per tenant, values sealed by the caller (SecretCipher) ---

    /** Stores a secret, replacing the value of the tenant's one with the same name; returns whether it is new. */
    boolean putSecret(TenantId tenant, SealedSecret secret);

    Optional<SealedSecret> findSecret(TenantId tenant, String name);

    /** The tenant's secrets, by name. */
    List<SealedSecret> secretsOf(TenantId tenant);

    /** Forgets a tenant's secret; returns whether it existed. */
    boolean deleteSecret(TenantId tenant, String name);
}
