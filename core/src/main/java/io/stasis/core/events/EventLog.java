package io.stasis.core.events;

import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.Catalog;
import io.stasis.core.tenant.TenantId;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records events in the catalog (so streams can resume from an id across restarts) and hands each
 * to the live subscribers.
 */
public final class EventLog {
    private static final Logger log = LoggerFactory.getLogger(EventLog.class);

    private final Catalog catalog;
    private final Clock clock;
    private final List<Consumer<Event>> subscribers = new CopyOnWriteArrayList<>();

    public EventLog(Catalog catalog, Clock clock) {
        this.catalog = catalog;
        this.clock = clock;
    }

    /** A lifecycle transition: {@code {sandboxId, from, to, reason}}. */
    public Event lifecycle(SandboxId sandbox, String from, String to, String reason) {
        var data = new LinkedHashMap<String, Object>();
        data.put("sandboxId", sandbox.value());
        data.put("from", from);
        data.put("to", to);
        data.put("reason", reason);
        log.atInfo().addKeyValue("sandbox", sandbox).addKeyValue("from", from).addKeyValue("to", to)
                .addKeyValue("reason", reason).log("lifecycle");
        return append("lifecycle", Optional.of(sandbox), data);
    }

    /** Records an event of the tenant whose sandbox it is about (the sandbox's record must still exist). */
    public Event append(String type, Optional<SandboxId> sandbox, Map<String, Object> data) {
        var tenant = sandbox.flatMap(catalog::find).map(Sandbox::tenant);
        var event = catalog.appendEvent(new Event(0, clock.instant(), type, sandbox, data, tenant));
        for (var subscriber : subscribers) {
            try {
                subscriber.accept(event);
            } catch (RuntimeException e) {
                log.atWarn().setCause(e).log("an event subscriber failed");
            }
        }
        return event;
    }

    /** Events after {@code afterId}, oldest first, optionally of one sandbox, that {@code viewer} may see. */
    public List<Event> after(long afterId, Optional<SandboxId> sandbox, TenantId viewer, int limit) {
        return catalog.eventsAfter(afterId, sandbox, Optional.of(viewer), limit);
    }

    /** The newest event's id (0: none yet): {@code after} it, only events still to come. */
    public long lastId() {
        return catalog.lastEventId();
    }

    public AutoCloseable subscribe(Consumer<Event> subscriber) {
        subscribers.add(subscriber);
        return () -> subscribers.remove(subscriber);
    }
}
