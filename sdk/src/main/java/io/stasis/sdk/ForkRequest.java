package io.stasis.sdk;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * The body of {@code POST /v1/sandboxes/{id}/fork}. Every field is optional and unset ones are
 * not sent.
 *
 * <pre>{@code
 * List<Sandbox> tries = sandbox.fork(ForkRequest.builder()
 *         .checkpoint("ckpt_...")   // default: the current state (the server takes a "fork" checkpoint)
 *         .count(3)                 // 1..100, default 1
 *         .name("try")              // one fork: "try"; several: "try-1", "try-2", ...
 *         .build());
 * }</pre>
 *
 * @param checkpoint the checkpoint to fork from, or null for the sandbox's current state
 * @param count      how many forks, 1..100, or null for one
 * @param name       the fork's name, or the prefix of several forks' names; null for none
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ForkRequest(String checkpoint, Integer count, String name) {

    public static Builder builder() {
        return new Builder();
    }

    /** Builds a {@link ForkRequest}. */
    public static final class Builder {
        private String checkpoint;
        private Integer count;
        private String name;

        private Builder() {
        }

        /** The checkpoint to fork from ({@code ckpt_...}); default: the current state. */
        public Builder checkpoint(String checkpointId) {
            this.checkpoint = checkpointId;
            return this;
        }

        /** How many forks, 1..100. */
        public Builder count(int count) {
            if (count < 1 || count > 100) throw new IllegalArgumentException("count must be between 1 and 100, was " + count);
            this.count = count;
            return this;
        }

        public Builder name(String name) {
            this.name = name;
            return this;
        }

        public ForkRequest build() {
            return new ForkRequest(checkpoint, count, name);
        }
    }
}
