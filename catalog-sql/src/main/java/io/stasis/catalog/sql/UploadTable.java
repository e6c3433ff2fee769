package io.stasis.catalog.sql;

import io.stasis.core.blob.ManifestId;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.checkpoint.CheckpointUpload;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The SQL of the {@code checkpoint_uploads} table. Callers hold the catalog's lock. */
final class UploadTable {
    private static final String COLUMNS = "checkpoint_id, state, parent_id, root_manifest, image_manifest, logical_bytes, stored_bytes, error, updated_at";

    private UploadTable() {
    }

    static void upsert(Connection c, CheckpointUpload u, String node) throws SQLException {
        try (var st = c.prepareStatement("INSERT INTO checkpoint_uploads (" + COLUMNS + ", node) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                + " ON CONFLICT (checkpoint_id) DO UPDATE SET state = excluded.state, parent_id = excluded.parent_id,"
                + " root_manifest = excluded.root_manifest, image_manifest = excluded.image_manifest,"
                + " logical_bytes = excluded.logical_bytes, stored_bytes = excluded.stored_bytes, error = excluded.error,"
                + " updated_at = excluded.updated_at, node = excluded.node")) {
            st.setString(1, u.checkpoint().value());
            st.setString(2, u.state().wireName());
            st.setString(3, u.parent().map(CheckpointId::value).orElse(null));
            st.setString(4, u.root().map(ManifestId::hex).orElse(null));
            st.setString(5, u.image().map(ManifestId::hex).orElse(null));
            st.setLong(6, u.logicalBytes());
            st.setLong(7, u.storedBytes());
            st.setString(8, u.error().orElse(null));
            st.setString(9, CatalogTime.format(u.updatedAt()));
            st.setString(10, node);
            st.executeUpdate();
        }
    }

    static Optional<CheckpointUpload> find(Connection c, CheckpointId id) throws SQLException {
        var rows = query(c, "SELECT " + COLUMNS + " FROM checkpoint_uploads WHERE checkpoint_id = ?", id.value());
        return rows.isEmpty() ? Optional.empty() : Optional.of(rows.getFirst());
    }

    /** The uploads {@code node} runs (from its disk). */
    static List<CheckpointUpload> all(Connection c, String node) throws SQLException {
        return query(c, "SELECT " + COLUMNS + " FROM checkpoint_uploads WHERE node = ? ORDER BY checkpoint_id", node);
    }

    static void delete(Connection c, CheckpointId id) throws SQLException {
        try (var st = c.prepareStatement("DELETE FROM checkpoint_uploads WHERE checkpoint_id = ?")) {
            st.setString(1, id.value());
            st.executeUpdate();
        }
    }

    private static List<CheckpointUpload> query(Connection c, String sql, String key) throws SQLException {
        try (var st = c.prepareStatement(sql)) {
            if (key != null) st.setString(1, key);
            try (var rs = st.executeQuery()) {
                var out = new ArrayList<CheckpointUpload>();
                while (rs.next()) out.add(read(rs));
                return out;
            }
        }
    }

    private static CheckpointUpload read(ResultSet rs) throws SQLException {
        String id = rs.getString("checkpoint_id");
        try {
            return new CheckpointUpload(new CheckpointId(id), CheckpointUpload.State.ofWireName(rs.getString("state")),
                    Optional.ofNullable(rs.getString("parent_id")).map(CheckpointId::new),
                    Optional.ofNullable(rs.getString("root_manifest")).map(ManifestId::parse),
                    Optional.ofNullable(rs.getString("image_manifest")).map(ManifestId::parse),
                    rs.getLong("logical_bytes"), rs.getLong("stored_bytes"), Optional.ofNullable(rs.getString("error")),
                    CatalogTime.parse(rs.getString("updated_at")));
        } catch (RuntimeException e) {
            throw new StasisException(ErrorCode.INTERNAL, "the catalog's record of the upload of checkpoint " + id + " is unreadable: " + e.getMessage(),
                    Map.of("checkpoint", String.valueOf(id)), e);
        }
    }
}
