package io.stasis.core.checkpoint;

import io.stasis.core.sandbox.RuntimeKind;
import io.stasis.core.sandbox.SandboxId;
import java.time.Instant;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * A saved state of a sandbox: always a read-only snapshot of its root, and with {@code memory}
 * also an image of its processes.
 *
 * @param purpose   who made it: a caller, or the service for a hibernation or a fork of the current state
 * @param sizeBytes bytes held by the process image (0 without memory); the root snapshot shares
 *                  its blocks with the sandbox and costs only what changes afterwards
 * @param runtime   the runtime of the sandbox it was taken of: its image restores only there, and
 *                  its forks run there
 */
public record Checkpoint(CheckpointId id, SandboxId sandboxId, Optional<String> name, boolean memory,
                         Purpose purpose, long sizeBytes, Instant createdAt, RuntimeKind runtime) {

    public enum Purpose {
        /** Asked for through the API; listed and deleted by callers. */
        USER,
        /** The image of a hibernated sandbox; gone when it resumes. */
        HIBERNATION,
        /** Taken to fork a sandbox's current state; kept while forks refer to it. */
        FORK,
        /**
         * Taken by the service every {@code checkpointEvery} of a running sandbox's policy, with memory,
         * and made durable: what another node resumes it from if its node is lost. The newest is kept;
         * listed like the caller's own.
         */
        DURABILITY;

        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public Checkpoint {
        Objects.requireNonNull(id);
        Objects.requireNonNull(sandboxId);
        Objects.requireNonNull(name);
        Objects.requireNonNull(purpose);
        Objects.requireNonNull(createdAt);
        Objects.requireNonNull(runtime);
    }
}
