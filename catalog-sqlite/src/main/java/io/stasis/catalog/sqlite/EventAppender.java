package io.stasis.catalog.sqlite;

import io.stasis.core.events.Event;
import java.sql.Connection;
import java.sql.SQLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Appends events and keeps the {@code events} table within its {@link EventRetention}: every
 * {@code trimEvery} appends the append's own transaction also trims the table. Callers hold the
 * catalog's lock, which guards the count of appends since the last trim.
 */
final class EventAppender {
    private static final Logger log = LoggerFactory.getLogger(EventAppender.class);

    private final EventRetention retention;
    private int appendsSinceTrim; // guarded by the catalog's lock

    EventAppender(EventRetention retention) {
        this.retention = retention;
    }

    /**
     * Stores the event (its {@code id} is ignored) with {@code dataJson} as its data, in the
     * caller's transaction; returns it with its new id and its data as it will read back.
     */
    Event append(Connection c, Event event, String dataJson) throws SQLException {
        var data = JsonValues.normalize(event.data());
        long id = EventTable.append(c, event, dataJson);
        if (retention.bounded() && ++appendsSinceTrim >= retention.trimEvery()) {
            int trimmed = EventTable.trim(c, retention.keepNewest());
            appendsSinceTrim = 0;
            log.atDebug().addKeyValue("trimmed", trimmed).addKeyValue("newestId", id).log("events trimmed");
        }
        return new Event(id, event.at(), event.type(), event.sandbox(), data, event.tenant());
    }
}
