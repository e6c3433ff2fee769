package io.stasis.core.spi;

import io.stasis.core.events.Event;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.tenant.TenantId;
import java.util.List;
import java.util.Optional;

/** The event log, in id order. Writes are atomic and durable when the call returns; thread-safe. */
public interface EventCatalog {
    /** Stores an event, giving it the next id; returns it with that id. */
    Event appendEvent(Event event);

    /**
     * Events with an id above {@code afterId}, oldest first, of one sandbox or all; with a tenant,
     * only that tenant's events and those of no sandbox (see {@link Event#visibleTo}).
     */
    List<Event> eventsAfter(long afterId, Optional<SandboxId> sandbox, Optional<TenantId> tenant, int limit);

    /** The id of the newest event stored, 0 when there is none: where a reader of live events only starts. */
    long lastEventId();
}
