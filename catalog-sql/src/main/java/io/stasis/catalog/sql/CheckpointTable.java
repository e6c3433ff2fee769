package io.stasis.catalog.sql;

import io.stasis.core.checkpoint.Checkpoint;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.RuntimeKind;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.tenant.TenantId;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The SQL of the {@code checkpoints} table. Callers hold the catalog's lock. */
final class CheckpointTable {
    private static final String COLUMNS = "id, sandbox_id, name, memory, purpose, size_bytes, created_at, runtime";
    /** Oldest first; the id breaks ties so the order is total. */
    private static final String ORDER = " ORDER BY created_at, id";

    private CheckpointTable() {
    }

    static void insert(Connection c, Checkpoint checkpoint, String node) throws SQLException {
        try (var st = c.prepareStatement("INSERT INTO checkpoints (" + COLUMNS + ", node) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
            st.setString(1, checkpoint.id().value());
            st.setString(2, checkpoint.sandboxId().value());
            st.setString(3, checkpoint.name().orElse(null));
            st.setInt(4, checkpoint.memory() ? 1 : 0);
            st.setString(5, checkpoint.purpose().wireName());
            st.setLong(6, checkpoint.sizeBytes());
            st.setString(7, CatalogTime.format(checkpoint.createdAt()));
            st.setString(8, checkpoint.runtime().wireName());
            st.setString(9, node);
            st.executeUpdate();
        } catch (SQLException e) {
            if (SqlConflict.of(e).filter(SqlConflict::primaryKey).isPresent())
                throw new StasisException(ErrorCode.INTERNAL, "checkpoint " + checkpoint.id() + " is already in the catalog",
                        Map.of("checkpoint", checkpoint.id().value()), e);
            throw e;
        }
    }

    static Optional<Checkpoint> find(Connection c, CheckpointId id) throws SQLException {
        var rows = query(c, "SELECT " + COLUMNS + " FROM checkpoints WHERE id = ?", id.value());
        return rows.isEmpty() ? Optional.empty() : Optional.of(rows.getFirst());
    }

    static List<Checkpoint> ofSandbox(Connection c, SandboxId sandbox) throws SQLException {
        return query(c, "SELECT " + COLUMNS + " FROM checkpoints WHERE sandbox_id = ?" + ORDER, sandbox.value());
    }

    /** The checkpoints of {@code node}: their files are on its disk. */
    static List<Checkpoint> all(Connection c, String node) throws SQLException {
        return query(c, "SELECT " + COLUMNS + " FROM checkpoints WHERE node = ?" + ORDER, node);
    }

    /** A tenant's checkpoints, on every node: those of its sandboxes (also of sandboxes deleted since, which the tenant no longer owns, are not). */
    static List<Checkpoint> ofTenant(Connection c, TenantId tenant) throws SQLException {
        return query(c, "SELECT " + COLUMNS + " FROM checkpoints WHERE sandbox_id IN (SELECT id FROM sandboxes WHERE tenant_id = ?)" + ORDER,
                tenant.value());
    }

    static void delete(Connection c, CheckpointId id) throws SQLException {
        try (var st = c.prepareStatement("DELETE FROM checkpoints WHERE id = ?")) {
            st.setString(1, id.value());
            st.executeUpdate();
        }
    }

    static void setSpares(Connection c, CheckpointId id, int count) throws SQLException {
        try (var st = c.prepareStatement("UPDATE checkpoints SET spares = ? WHERE id = ?")) {
            st.setInt(1, count);
            st.setString(2, id.value());
            st.executeUpdate();
        }
    }

    /** Oldest first. */
    static Map<CheckpointId, Integer> spares(Connection c, String node) throws SQLException {
        try (var st = c.prepareStatement("SELECT id, spares FROM checkpoints WHERE spares > 0 AND node = ?" + ORDER)) {
            st.setString(1, node);
            try (var rs = st.executeQuery()) {
                var out = new LinkedHashMap<CheckpointId, Integer>();
                while (rs.next()) out.put(new CheckpointId(rs.getString("id")), rs.getInt("spares"));
                return out;
            }
        }
    }

    private static List<Checkpoint> query(Connection c, String sql, String key) throws SQLException {
        try (var st = c.prepareStatement(sql)) {
            if (key != null) st.setString(1, key);
            try (var rs = st.executeQuery()) {
                var out = new ArrayList<Checkpoint>();
                while (rs.next()) out.add(read(rs));
                return out;
            }
        }
    }

    private static Checkpoint read(ResultSet rs) throws SQLException {
        String id = rs.getString("id");
        try {
            return new Checkpoint(new CheckpointId(id), new SandboxId(rs.getString("sandbox_id")),
                    Optional.ofNullable(rs.getString("name")), rs.getInt("memory") == 1,
                    purpose(rs.getString("purpose")), rs.getLong("size_bytes"),
                    CatalogTime.parse(rs.getString("created_at")), RuntimeKind.parse("runtime", rs.getString("runtime")));
        } catch (RuntimeException e) {
            throw new StasisException(ErrorCode.INTERNAL, "the catalog's record of checkpoint " + id + " is unreadable: " + e.getMessage(),
                    Map.of("checkpoint", String.valueOf(id)), e);
        }
    }

    private static Checkpoint.Purpose purpose(String wireName) {
        for (var purpose : Checkpoint.Purpose.values()) if (purpose.wireName().equals(wireName)) return purpose;
        throw new IllegalArgumentException("unknown checkpoint purpose '" + wireName + "'");
    }
}
