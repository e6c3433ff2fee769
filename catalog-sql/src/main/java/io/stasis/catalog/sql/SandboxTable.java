package io.stasis.catalog.sql;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.Page;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.RuntimeKind;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxQuery;
import io.stasis.core.tenant.TenantId;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.StringJoiner;

/**
 * The SQL of the {@code sandboxes} table. Callers hold the catalog's lock. Which listing shows
 * sandboxes being deleted is in {@link SqlCatalog}'s "Listing".
 */
final class SandboxTable {
    private static final String COLUMNS = "id, name, template, " + StateColumns.NAMES
            + ", created_at, cpus, memory_mb, pids, disk_mb, env, metadata, parent_id, checkpoint_id, lifecycle, tenant_id, generation, runtime";
    private static final String PLACEHOLDERS = placeholders(COLUMNS.split(",").length);
    /** Every column but id, in {@link #bindFields} order. */
    private static final String ASSIGNMENTS = "name = ?, template = ?, " + StateColumns.ASSIGNMENTS
            + ", created_at = ?, cpus = ?, memory_mb = ?, pids = ?, disk_mb = ?, env = ?, metadata = ?, parent_id = ?, checkpoint_id = ?, lifecycle = ?, tenant_id = ?, generation = ?, runtime = ?";

    private SandboxTable() {
    }

    /** Records a new sandbox of {@code node}; {@code name_taken} if its name is in use. */
    static void insert(Connection c, Sandbox sandbox, String node) throws SQLException {
        try (var st = c.prepareStatement("INSERT INTO sandboxes (" + COLUMNS + ", node) VALUES (" + PLACEHOLDERS + ", ?)")) {
            st.setString(1, sandbox.id().value());
            int next = bindFields(st, 2, sandbox);
            st.setString(next, node);
            st.executeUpdate();
        } catch (SQLException e) {
            throwIfConstraint(e, sandbox);
            throw e;
        }
    }

    /** Replaces every column of the sandbox's row; {@code sandbox_not_found} if there is none. */
    static void update(Connection c, Sandbox sandbox) throws SQLException {
        int changed;
        try (var st = c.prepareStatement("UPDATE sandboxes SET " + ASSIGNMENTS + " WHERE id = ?")) {
            int next = bindFields(st, 1, sandbox);
            st.setString(next, sandbox.id().value());
            changed = st.executeUpdate();
        } catch (SQLException e) {
            throwIfConstraint(e, sandbox);
            throw e;
        }
        // Updating a sandbox nobody recorded is a caller bug; saying so beats silently losing the write.
        if (changed == 0) throw StasisException.sandboxNotFound(sandbox.id().value());
    }

    /** Binds every column after id, starting at {@code index}; returns the next free index. */
    private static int bindFields(PreparedStatement st, int index, Sandbox s) throws SQLException {
        st.setString(index++, s.name().orElse(null));
        st.setString(index++, s.template());
        index = StateColumns.bind(st, index, s.state());
        st.setString(index++, CatalogTime.format(s.createdAt()));
        st.setDouble(index++, s.resources().cpus());
        st.setInt(index++, s.resources().memoryMb());
        st.setInt(index++, s.resources().pids());
        st.setInt(index++, s.resources().diskMb());
        st.setString(index++, StringMaps.toJson(s.env()));
        st.setString(index++, StringMaps.toJson(s.metadata()));
        st.setString(index++, s.parentId().map(SandboxId::value).orElse(null));
        st.setString(index++, s.checkpointId().map(CheckpointId::value).orElse(null));
        st.setString(index++, LifecycleJson.toJson(s.lifecycle()));
        st.setString(index++, s.tenant().value());
        st.setLong(index++, s.generation());
        st.setString(index++, s.runtime().wireName());
        return index;
    }

    /** Turns a uniqueness violation into the error callers understand; other errors pass through. */
    private static void throwIfConstraint(SQLException e, Sandbox sandbox) {
        var conflict = SqlConflict.of(e);
        if (conflict.isEmpty()) return;
        if (conflict.get().primaryKey())
            throw new StasisException(ErrorCode.INTERNAL, "sandbox " + sandbox.id() + " is already in the catalog",
                    Map.of("sandbox", sandbox.id().value()), e);
        if (conflict.get().on("name")) throw StasisException.nameTaken(sandbox.name().orElseThrow());
    }

    static Optional<Sandbox> find(Connection c, SandboxId id) throws SQLException {
        return queryOne(c, "SELECT " + COLUMNS + " FROM sandboxes WHERE id = ?", id.value());
    }

    static Optional<Sandbox> findByName(Connection c, TenantId tenant, String name) throws SQLException {
        return queryOne(c, "SELECT " + COLUMNS + " FROM sandboxes WHERE tenant_id = ? AND name = ?", tenant.value(), name);
    }

    private static Optional<Sandbox> queryOne(Connection c, String sql, String... keys) throws SQLException {
        try (var st = c.prepareStatement(sql)) {
            for (int i = 0; i < keys.length; i++) st.setString(i + 1, keys[i]);
            try (var rs = st.executeQuery()) {
                return rs.next() ? Optional.of(read(rs)) : Optional.empty();
            }
        }
    }

    /** A page of the sandboxes not being deleted, filtered as the query says, continuing after its cursor. */
    static Page<Sandbox> list(Connection c, SqlEngine engine, SandboxQuery query) throws SQLException {
        var after = query.cursor().map(ListCursor::decode);
        var sql = new StringBuilder("SELECT " + COLUMNS + " FROM sandboxes WHERE state <> 'deleted'");
        var args = new ArrayList<Object>();
        query.tenant().ifPresent(tenant -> {
            sql.append(" AND tenant_id = ?");
            args.add(tenant.value());
        });
        query.state().ifPresent(state -> {
            sql.append(" AND state = ?");
            args.add(state);
        });
        query.metadata().forEach((key, value) -> {
            sql.append(" AND ").append(engine.metadataMatch("sandboxes.metadata"));
            args.add(key);
            args.add(value);
        });
        after.ifPresent(cursor -> {
            sql.append(" AND (created_at, id) > (?, ?)");
            args.add(CatalogTime.format(cursor.createdAt()));
            args.add(cursor.id().value());
        });
        // One row more than asked tells whether another page exists.
        sql.append(" ORDER BY created_at, id LIMIT ?");
        args.add(query.limit() + 1);

        List<Sandbox> rows = queryMany(c, sql.toString(), args);
        if (rows.size() <= query.limit()) return new Page<>(rows, Optional.empty());
        var items = rows.subList(0, query.limit());
        return new Page<>(items, Optional.of(ListCursor.after(items.getLast()).encode()));
    }

    /** Every sandbox of {@code node}, in any state. */
    static List<Sandbox> all(Connection c, String node) throws SQLException {
        return queryMany(c, "SELECT " + COLUMNS + " FROM sandboxes WHERE node = ? ORDER BY created_at, id", List.of(node));
    }

    static List<Sandbox> children(Connection c, SandboxId parent) throws SQLException {
        return queryMany(c, "SELECT " + COLUMNS + " FROM sandboxes WHERE parent_id = ? ORDER BY created_at, id", List.of(parent.value()));
    }

    /** Removes the sandbox's row only; the catalog removes what hangs off it in the same transaction. */
    static void delete(Connection c, SandboxId id) throws SQLException {
        SqlStatements.update(c, "DELETE FROM sandboxes WHERE id = ?", id.value());
    }

    /** Whether the tenant has a sandbox, in any state. */
    static boolean anyOf(Connection c, TenantId tenant) throws SQLException {
        return SqlStatements.exists(c, "SELECT 1 FROM sandboxes WHERE tenant_id = ?", tenant.value());
    }

    private static List<Sandbox> queryMany(Connection c, String sql, List<Object> args) throws SQLException {
        try (var st = c.prepareStatement(sql)) {
            for (int i = 0; i < args.size(); i++) st.setObject(i + 1, args.get(i));
            try (var rs = st.executeQuery()) {
                var out = new ArrayList<Sandbox>();
                while (rs.next()) out.add(read(rs));
                return out;
            }
        }
    }

    private static Sandbox read(ResultSet rs) throws SQLException {
        String id = rs.getString("id");
        try {
            return new Sandbox(
                    new SandboxId(id),
                    Optional.ofNullable(rs.getString("name")),
                    rs.getString("template"),
                    StateColumns.read(rs),
                    CatalogTime.parse(rs.getString("created_at")),
                    new Resources(rs.getDouble("cpus"), rs.getInt("memory_mb"), rs.getInt("pids"), rs.getInt("disk_mb")),
                    StringMaps.fromJson(rs.getString("env")),
                    StringMaps.fromJson(rs.getString("metadata")),
                    Optional.ofNullable(rs.getString("parent_id")).map(SandboxId::new),
                    Optional.ofNullable(rs.getString("checkpoint_id")).map(CheckpointId::new),
                    LifecycleJson.fromJson(rs.getString("lifecycle")),
                    new TenantId(rs.getString("tenant_id")),
                    rs.getLong("generation"),
                    RuntimeKind.parse("runtime", rs.getString("runtime")));
        } catch (JsonProcessingException | RuntimeException e) {
            // A row this code cannot read means a damaged file or a schema mismatch, not a bad request.
            throw new StasisException(ErrorCode.INTERNAL, "the catalog's record of sandbox " + id + " is unreadable: " + e.getMessage(),
                    Map.of("sandbox", String.valueOf(id)), e);
        }
    }

    private static String placeholders(int count) {
        var joiner = new StringJoiner(", ");
        for (int i = 0; i < count; i++) joiner.add("?");
        return joiner.toString();
    }
}
