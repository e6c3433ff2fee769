package io.stasis.core.spi;

import io.stasis.core.auth.ApiKey;
import io.stasis.core.checkpoint.Checkpoint;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.events.Event;
import io.stasis.core.journal.Operation;
import io.stasis.core.preview.Preview;
import io.stasis.core.preview.PreviewId;
import io.stasis.core.sandbox.Page;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxQuery;
import java.util.List;
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

    Optional<Sandbox> findByName(String name);

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
    void insertNetwork(io.stasis.core.network.SandboxNetwork network);

    /** Replaces a sandbox's network policy (same id and slot). */
    void updateNetwork(io.stasis.core.network.SandboxNetwork network);

    Optional<io.stasis.core.network.SandboxNetwork> findNetwork(SandboxId id);

    List<io.stasis.core.network.SandboxNetwork> allNetworks();

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

    // --- events ---

    /** Stores an event, giving it the next id; returns it with that id. */
    Event appendEvent(Event event);

    /** Events with an id above {@code afterId}, oldest first, of one sandbox or all. */
    List<Event> eventsAfter(long afterId, Optional<SandboxId> sandbox, int limit);

    // --- keys ---

    void insertApiKey(ApiKey key);

    /** The key with this hash of its secret. */
    Optional<ApiKey> findApiKeyByHash(String secretHash);

    /** Whether a root key exists (created on the first start). */
    boolean hasRootKey();

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

    // --- secrets: service-wide, values sealed by the caller (SecretCipher) ---

    /** Stores a secret, replacing the value of one with the same name; returns whether it is new. */
    boolean putSecret(io.stasis.core.secret.SealedSecret secret);

    Optional<io.stasis.core.secret.SealedSecret> findSecret(String name);

    /** Every secret, by name. */
    List<io.stasis.core.secret.SealedSecret> allSecrets();

    /** Forgets a secret; returns whether it existed. */
    boolean deleteSecret(String name);
}
