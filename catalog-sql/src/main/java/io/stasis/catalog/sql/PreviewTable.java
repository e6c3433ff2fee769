package io.stasis.catalog.sql;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.preview.Preview;
import io.stasis.core.preview.PreviewId;
import io.stasis.core.sandbox.SandboxId;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The SQL of the {@code previews} table. Callers hold the catalog's lock. */
final class PreviewTable {
    private static final String COLUMNS = "id, sandbox_id, port, public, token_hash, created_at, expires_at";
    /** Oldest first; the id breaks ties so the order is total. */
    private static final String ORDER = " ORDER BY created_at, id";

    private PreviewTable() {
    }

    /** Inserts the row only while its sandbox exists and is not being deleted; returns whether it did. */
    static boolean insert(Connection c, Preview preview) throws SQLException {
        try (var st = c.prepareStatement("INSERT INTO previews (" + COLUMNS + ") SELECT ?, ?, ?, ?, ?, ?, ?"
                + " WHERE EXISTS (SELECT 1 FROM sandboxes WHERE id = ? AND state <> 'deleted')")) {
            st.setString(1, preview.id().value());
            st.setString(2, preview.sandboxId().value());
            st.setInt(3, preview.port());
            st.setInt(4, preview.isPublic() ? 1 : 0);
            st.setString(5, preview.tokenHash().orElse(null));
            st.setString(6, CatalogTime.format(preview.createdAt()));
            st.setString(7, preview.expiresAt().map(CatalogTime::format).orElse(null));
            st.setString(8, preview.sandboxId().value());
            return st.executeUpdate() == 1;
        } catch (SQLException e) {
            if (SqlConflict.of(e).filter(SqlConflict::primaryKey).isPresent())
                throw new StasisException(ErrorCode.INTERNAL, "preview " + preview.id() + " is already in the catalog",
                        Map.of("preview", preview.id().value()), e);
            throw e;
        }
    }

    static Optional<Preview> find(Connection c, PreviewId id) throws SQLException {
        var rows = query(c, "SELECT " + COLUMNS + " FROM previews WHERE id = ?", id.value());
        return rows.isEmpty() ? Optional.empty() : Optional.of(rows.getFirst());
    }

    static List<Preview> ofSandbox(Connection c, SandboxId sandbox) throws SQLException {
        return query(c, "SELECT " + COLUMNS + " FROM previews WHERE sandbox_id = ?" + ORDER, sandbox.value());
    }

    static void delete(Connection c, PreviewId id) throws SQLException {
        SqlStatements.update(c, "DELETE FROM previews WHERE id = ?", id.value());
    }

    /** Removes every preview of a sandbox (as it is deleted). */
    static void deleteOf(Connection c, SandboxId sandbox) throws SQLException {
        SqlStatements.update(c, "DELETE FROM previews WHERE sandbox_id = ?", sandbox.value());
    }


    private static List<Preview> query(Connection c, String sql, String key) throws SQLException {
        try (var st = c.prepareStatement(sql)) {
            st.setString(1, key);
            try (var rs = st.executeQuery()) {
                var out = new ArrayList<Preview>();
                while (rs.next()) out.add(read(rs));
                return out;
            }
        }
    }

    private static Preview read(ResultSet rs) throws SQLException {
        String id = rs.getString("id");
        try {
            return new Preview(new PreviewId(id), new SandboxId(rs.getString("sandbox_id")), rs.getInt("port"),
                    rs.getInt("public") == 1, Optional.ofNullable(rs.getString("token_hash")),
                    CatalogTime.parse(rs.getString("created_at")),
                    Optional.ofNullable(rs.getString("expires_at")).map(CatalogTime::parse));
        } catch (RuntimeException e) {
            throw new StasisException(ErrorCode.INTERNAL, "the catalog's record of preview " + id + " is unreadable: " + e.getMessage(),
                    Map.of("preview", String.valueOf(id)), e);
        }
    }
}
