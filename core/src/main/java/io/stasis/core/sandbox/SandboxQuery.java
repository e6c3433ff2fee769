package io.stasis.core.sandbox;

import io.stasis.core.error.StasisException;
import io.stasis.core.tenant.TenantId;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A page request over sandboxes.
 *
 * @param state    only sandboxes in this state (wire name), if present
 * @param metadata only sandboxes whose metadata contains all these entries
 * @param cursor   where the previous page ended (opaque to callers)
 * @param limit    page size, 1..1000
 * @param tenant   only this tenant's sandboxes, if present
 */
public record SandboxQuery(Optional<String> state, Map<String, String> metadata, Optional<String> cursor, int limit,
                           Optional<TenantId> tenant) {
    public static final int DEFAULT_LIMIT = 100;
    public static final int MAX_LIMIT = 1000;
    private static final List<String> STATES = List.of("running", "paused", "standby", "hibernated", "stopped");

    public SandboxQuery {
        metadata = Map.copyOf(metadata);
        if (limit < 1 || limit > MAX_LIMIT) throw StasisException.invalid("limit", "must be between 1 and " + MAX_LIMIT + ", was " + limit);
        state.ifPresent(s -> {
            if (!STATES.contains(s))
                throw StasisException.invalid("state", "must be one of " + String.join(", ", STATES) + "; was '" + s + "'");
        });
    }

    public static SandboxQuery all() {
        return new SandboxQuery(Optional.empty(), Map.of(), Optional.empty(), MAX_LIMIT, Optional.empty());
    }
}
