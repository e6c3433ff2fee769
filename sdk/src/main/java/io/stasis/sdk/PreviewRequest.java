package io.stasis.sdk;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Duration;

/**
 * The body of {@code POST /v1/sandboxes/{id}/previews}.
 *
 * <pre>{@code
 * Preview p = sandbox.previews().create(PreviewRequest.builder(3000).ttl(Duration.ofHours(2)).build());
 * }</pre>
 *
 * @param port       the sandbox's TCP port, 1-65535
 * @param isPublic   true: anyone who reaches the preview listener gets through, no token
 * @param ttlSeconds how long it works, at most 30 days; null for no expiry
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record PreviewRequest(int port, @JsonProperty("public") boolean isPublic, Long ttlSeconds) {

    /** A private preview of {@code port} without expiry. */
    public static PreviewRequest of(int port) {
        return new PreviewRequest(port, false, null);
    }

    public static Builder builder(int port) {
        return new Builder(port);
    }

    /** Builds a {@link PreviewRequest}: private and without expiry unless told. */
    public static final class Builder {
        private final int port;
        private boolean isPublic;
        private Long ttlSeconds;

        private Builder(int port) {
            this.port = port;
        }

        /** Public: no token needed. */
        public Builder isPublic(boolean value) {
            this.isPublic = value;
            return this;
        }

        /** Expires after this long (whole seconds; null: never). */
        public Builder ttl(Duration ttl) {
            this.ttlSeconds = ttl == null ? null : ttl.toSeconds();
            return this;
        }

        public PreviewRequest build() {
            return new PreviewRequest(port, isPublic, ttlSeconds);
        }
    }
}
