package io.stasis.core.journal;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.sandbox.SandboxId;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * A multi-step change of a sandbox in progress, written to the catalog before its first step and
 * removed in the same transaction that records its outcome. A service that died in between finds
 * it at start-up and settles the sandbox in the old or the new state (see the reconciler).
 *
 * @param checkpoint the checkpoint the operation makes or uses, if any
 */
public record Operation(SandboxId sandbox, Kind kind, Optional<CheckpointId> checkpoint, Instant startedAt) {

    public enum Kind { PAUSE, STANDBY, RESUME, HIBERNATE, RESTORE, CHECKPOINT, FORK, STOP, START }

    public Operation {
        Objects.requireNonNull(sandbox);
        Objects.requireNonNull(kind);
        Objects.requireNonNull(checkpoint);
        Objects.requireNonNull(startedAt);
    }
}
