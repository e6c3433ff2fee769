package io.stasis.catalog.sql;

import io.stasis.core.events.Event;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Appends events and keeps the {@code events} table within its {@link EventRetention}: every
 * {@code trimEvery} appends (counted in this service) the append's own transaction also trims the
 * table. Appends take turns ({@link SqlEngine.Turn#EVENT_APPEND}), so ids become visible in order.
 */
final class EventAppender {
    private static final Logger log = LoggerFactory.getLogger(EventAppender.class);

    private final EventRetention retention;
    private final SqlEngine engine;
    private final AtomicInteger appendsSinceTrim = new AtomicInteger();

    EventAppender(SqlEngine engine, EventRetention retention) {
        this.engine = engine;
        this.retention = retention;
    }

    /**
     * Stores the event (its {@code id} is ignored) with {@code dataJson} as its data, in the
     * caller's transaction; returns it with its new id and its data as it will read back.
     */
    Event append(Connection c, Event event, String dataJson) throws SQLException {
        var data = JsonValues.normalize(event.data());
        engine.serialize(c, SqlEngine.Turn.EVENT_APPEND);
        long id = EventTable.append(c, event, dataJson);
        if (retention.bounded() && appendsSinceTrim.incrementAndGet() >= retention.trimEvery()) {
            appendsSinceTrim.set(0);
            int trimmed = EventTable.trim(c, retention.keepNewest());
            log.atDebug().addKeyValue("trimmed", trimmed).addKeyValue("newestId", id).log("events trimmed");
        }
        return new Event(id, event.at(), event.type(), event.sandbox(), data, event.tenant());
    }
}
