package io.stasis.catalog.sql;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.checkpoint.DurableImage;
import io.stasis.core.sandbox.SandboxId;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Optional;

/** The SQL of the {@code durable_images} table: one row per sandbox. Callers hold the catalog's lock. */
final class DurableImageTable {
    private DurableImageTable() {
    }

    /** Replaces the sandbox's row unless the one there was taken later. */
    static void record(Connection c, SandboxId sandbox, DurableImage image) throws SQLException {
        var current = find(c, sandbox);
        if (current.isPresent() && current.get().takenAt().isAfter(image.takenAt())) return;
        try (var st = c.prepareStatement("INSERT INTO durable_images (sandbox_id, checkpoint_id, digest, taken_at) VALUES (?, ?, ?, ?)"
                + " ON CONFLICT (sandbox_id) DO UPDATE SET checkpoint_id = excluded.checkpoint_id, digest = excluded.digest,"
                + " taken_at = excluded.taken_at")) {
            st.setString(1, sandbox.value());
            st.setString(2, image.checkpoint().value());
            st.setString(3, image.digest());
            st.setString(4, CatalogTime.format(image.takenAt()));
            st.executeUpdate();
        }
    }

    static Optional<DurableImage> find(Connection c, SandboxId sandbox) throws SQLException {
        try (var st = c.prepareStatement("SELECT checkpoint_id, digest, taken_at FROM durable_images WHERE sandbox_id = ?")) {
            st.setString(1, sandbox.value());
            try (var rs = st.executeQuery()) {
                if (!rs.next()) return Optional.empty();
                return Optional.of(new DurableImage(new CheckpointId(rs.getString(1)), rs.getString(2), CatalogTime.parse(rs.getString(3))));
            }
        }
    }

    static void deleteOf(Connection c, SandboxId sandbox) throws SQLException {
        try (var st = c.prepareStatement("DELETE FROM durable_images WHERE sandbox_id = ?")) {
            st.setString(1, sandbox.value());
            st.executeUpdate();
        }
    }
}
