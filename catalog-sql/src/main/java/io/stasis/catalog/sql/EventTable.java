package io.stasis.catalog.sql;

import io.stasis.core.tenant.TenantId;
import com.fasterxml.jackson.core.JsonProcessingException;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.events.Event;
import io.stasis.core.sandbox.SandboxId;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The SQL of the {@code events} table. Callers hold the catalog's lock. */
final class EventTable {
    private EventTable() {
    }

    /** Inserts the event with {@code dataJson} as its data; returns the id SQLite gave it. */
    static long append(Connection c, Event event, String dataJson) throws SQLException {
        try (var st = c.prepareStatement("INSERT INTO events (at, type, sandbox_id, data, tenant_id) VALUES (?, ?, ?, ?, ?) RETURNING id")) {
            st.setString(1, CatalogTime.format(event.at()));
            st.setString(2, event.type());
            st.setString(3, event.sandbox().map(SandboxId::value).orElse(null));
            st.setString(4, dataJson);
            st.setString(5, event.tenant().map(TenantId::value).orElse(null));
            try (var rs = st.executeQuery()) {
                if (!rs.next()) throw new SQLException("INSERT ... RETURNING id returned no row");
                return rs.getLong(1);
            }
        }
    }

    static long lastId(Connection c) throws SQLException {
        try (var st = c.prepareStatement("SELECT COALESCE(MAX(id), 0) FROM events"); var rs = st.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    static List<Event> after(Connection c, long afterId, Optional<SandboxId> sandbox, Optional<TenantId> tenant, int limit)
            throws SQLException {
        var sql = new StringBuilder("SELECT id, at, type, sandbox_id, data, tenant_id FROM events WHERE id > ?");
        var args = new ArrayList<Object>();
        args.add(afterId);
        sandbox.ifPresent(s -> {
            sql.append(" AND sandbox_id = ?");
            args.add(s.value());
        });
        tenant.ifPresent(t -> {
            // An event about a sandbox whose tenant was unknown when it was recorded is nobody's to see.
            sql.append(" AND (tenant_id = ? OR sandbox_id IS NULL)");
            args.add(t.value());
        });
        sql.append(" ORDER BY id LIMIT ?");
        args.add(limit);
        try (var st = c.prepareStatement(sql.toString())) {
            for (int i = 0; i < args.size(); i++) st.setObject(i + 1, args.get(i));
            try (var rs = st.executeQuery()) {
                var out = new ArrayList<Event>();
                while (rs.next()) out.add(read(rs));
                return out;
            }
        }
    }

    /**
     * Deletes all but the newest {@code keep} events; returns how many went. Ids are contiguous in
     * SQLite (AUTOINCREMENT, and only this method deletes, from the old end), so the newest
     * {@code keep} are those above {@code max(id) - keep}: a range delete on the primary key. In
     * PostgreSQL a rolled-back append leaves a gap, so a few fewer may stay, never more.
     */
    static int trim(Connection c, long keep) throws SQLException {
        try (var st = c.prepareStatement("DELETE FROM events WHERE id <= (SELECT max(id) FROM events) - ?")) {
            st.setLong(1, keep);
            return st.executeUpdate();
        }
    }

    private static Event read(ResultSet rs) throws SQLException {
        long id = rs.getLong("id");
        try {
            return new Event(id, CatalogTime.parse(rs.getString("at")), rs.getString("type"),
                    Optional.ofNullable(rs.getString("sandbox_id")).map(SandboxId::new),
                    JsonValues.fromJson(rs.getString("data")),
                    Optional.ofNullable(rs.getString("tenant_id")).map(TenantId::new));
        } catch (JsonProcessingException | RuntimeException e) {
            throw new StasisException(ErrorCode.INTERNAL, "the catalog's record of event " + id + " is unreadable: " + e.getMessage(),
                    Map.of("event", id), e);
        }
    }
}
