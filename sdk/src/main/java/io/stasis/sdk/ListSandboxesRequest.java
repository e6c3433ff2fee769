package io.stasis.sdk;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Filters and paging for {@code GET /v1/sandboxes}. Results are oldest first.
 *
 * <pre>{@code
 * Page<Sandbox> running = client.sandboxes().list(ListSandboxesRequest.builder()
 *         .state("running")
 *         .metadata("team", "x")     // every given label must match
 *         .limit(50)
 *         .build());
 * }</pre>
 *
 * @param state    {@code running}, {@code paused}, {@code hibernated} or {@code stopped}, or null for all
 * @param metadata labels that must all match
 * @param limit    page size 1..1000, or null for the server's default (100)
 * @param cursor   a {@link Page#nextCursor()} to continue from, or null
 */
public record ListSandboxesRequest(String state, Map<String, String> metadata, Integer limit, String cursor) {
    public ListSandboxesRequest {
        metadata = SandboxInfo.copy(metadata);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The same filters, continuing at {@code nextCursor}. */
    public ListSandboxesRequest withCursor(String nextCursor) {
        return new ListSandboxesRequest(state, metadata, limit, nextCursor);
    }

    Query toQuery() {
        var query = Query.of().add("state", state);
        metadata.forEach((key, value) -> query.add("metadata." + key, value));
        return query.add("limit", limit).add("cursor", cursor);
    }

    /** Builds a {@link ListSandboxesRequest}. */
    public static final class Builder {
        private String state;
        private final Map<String, String> metadata = new LinkedHashMap<>();
        private Integer limit;
        private String cursor;

        private Builder() {
        }

        public Builder state(String state) {
            this.state = state;
            return this;
        }

        public Builder metadata(String key, String value) {
            metadata.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
            return this;
        }

        public Builder limit(int limit) {
            this.limit = limit;
            return this;
        }

        public Builder cursor(String cursor) {
            this.cursor = cursor;
            return this;
        }

        public ListSandboxesRequest build() {
            return new ListSandboxesRequest(state, metadata, limit, cursor);
        }
    }
}
