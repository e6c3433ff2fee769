package io.stasis.core.spi;

import io.stasis.core.checkpoint.Checkpoint;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.checkpoint.CheckpointUpload;
import io.stasis.core.checkpoint.DurableImage;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.tenant.TenantId;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Checkpoints, the spares kept restored ahead of forks, and uploads to the durable store. Writes
 * are atomic and durable when the call returns; thread-safe.
 */
public interface CheckpointCatalog {
    void insertCheckpoint(Checkpoint checkpoint);

    Optional<Checkpoint> findCheckpoint(CheckpointId id);

    /** A sandbox's checkpoints, oldest first. */
    List<Checkpoint> checkpointsOf(SandboxId sandbox);

    /** This node's checkpoints (see {@link NodeCatalog}), oldest first. */
    List<Checkpoint> allCheckpoints();

    /** A tenant's checkpoints on every node: those of its sandboxes that have a record, oldest first. */
    List<Checkpoint> checkpointsOfTenant(TenantId tenant);

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
}
