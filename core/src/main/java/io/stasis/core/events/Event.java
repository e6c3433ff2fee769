package io.stasis.core.events;

import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.tenant.TenantId;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Something that happened, kept in order: a lifecycle transition, a checkpoint, a fork, an
 * error. {@code id} increases with every event and is the resume point of event streams.
 *
 * @param type the stream's event name: {@code lifecycle}, {@code checkpoint}, {@code fork}, {@code error}
 * @param data   the event's fields, as they appear on the wire
 * @param tenant whose sandbox it is about; empty for events of no sandbox, which every tenant sees
 *               (and for an event of a sandbox already forgotten, which no tenant sees)
 */
public record Event(long id, Instant at, String type, Optional<SandboxId> sandbox, Map<String, Object> data,
                    Optional<TenantId> tenant) {
    public Event {
        Objects.requireNonNull(at);
        Objects.requireNonNull(type);
        Objects.requireNonNull(sandbox);
        Objects.requireNonNull(tenant);
        data = Map.copyOf(data);
    }

    /** Whether a caller of {@code viewer} may see it: an event of no sandbox, or one of the viewer's sandboxes. */
    public boolean visibleTo(TenantId viewer) {
        return sandbox.isEmpty() || tenant.filter(viewer::equals).isPresent();
    }
}
