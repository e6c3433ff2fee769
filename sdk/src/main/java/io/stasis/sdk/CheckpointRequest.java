package io.stasis.sdk;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * The body of {@code POST /v1/sandboxes/{id}/checkpoints}.
 *
 * <pre>{@code
 * Checkpoint c = sandbox.checkpoint(CheckpointRequest.builder().name("before-tests").memory(false).build());
 * }</pre>
 *
 * @param name   a name for it, or null
 * @param memory true: also a CRIU image of the processes, which keep running (a hibernated sandbox
 *               is resumed first); false: a read-only snapshot of the root only, taken while the
 *               processes are frozen for an instant (the only kind a stopped sandbox can have)
 * @param durable true: the call returns only once the checkpoint is in the blob store, restorable
 *                on any instance sharing it; null or false: it is uploaded in the background
 *                ({@link Checkpoints#sync})
 * @param spares  with memory: forks of it to keep restored ahead, in standby, so that a fork of it
 *                only thaws one ({@link Checkpoint#keepSpares}); null or 0: none
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record CheckpointRequest(String name, boolean memory, Boolean durable, Integer spares) {

    public CheckpointRequest(String name, boolean memory, Boolean durable) {
        this(name, memory, durable, null);
    }

    public CheckpointRequest(String name, boolean memory) {
        this(name, memory, null);
    }

    /** A checkpoint with memory and this name (null for none). */
    public static CheckpointRequest withMemory(String name) {
        return new CheckpointRequest(name, true);
    }

    /** A files-only checkpoint with this name (null for none). */
    public static CheckpointRequest filesOnly(String name) {
        return new CheckpointRequest(name, false);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Builds a {@link CheckpointRequest}; memory is on unless turned off. */
    public static final class Builder {
        private String name;
        private boolean memory = true;
        private Boolean durable;
        private Integer spares;

        private Builder() {
        }

        public Builder name(String name) {
            this.name = name;
            return this;
        }

        /** Whether to keep the processes and their memory (default true). */
        public Builder memory(boolean memory) {
            this.memory = memory;
            return this;
        }

        /** Whether the call waits until the checkpoint is in the blob store (default false: uploaded in the background). */
        public Builder durable(boolean durable) {
            this.durable = durable;
            return this;
        }

        /** Forks to keep restored ahead (memory checkpoints only; default none). */
        public Builder spares(int spares) {
            this.spares = spares;
            return this;
        }

        public CheckpointRequest build() {
            return new CheckpointRequest(name, memory, durable, spares);
        }
    }
}
