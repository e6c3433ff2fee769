package io.stasis.catalog.sql;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.journal.Operation;
import io.stasis.core.sandbox.SandboxId;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The SQL of the {@code operations} table: the journal of operations in progress, one row per
 * sandbox at most. Callers hold the catalog's lock.
 */
final class OperationTable {
    private OperationTable() {
    }

    /** Records {@code operation}, replacing any row the sandbox had. */
    static void begin(Connection c, Operation operation, String node) throws SQLException {
        try (var st = c.prepareStatement("""
                INSERT INTO operations (sandbox_id, kind, checkpoint_id, started_at, node) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (sandbox_id) DO UPDATE SET
                    kind = excluded.kind, checkpoint_id = excluded.checkpoint_id, started_at = excluded.started_at, node = excluded.node""")) {
            st.setString(1, operation.sandbox().value());
            st.setString(2, operation.kind().name().toLowerCase(Locale.ROOT));
            st.setString(3, operation.checkpoint().map(CheckpointId::value).orElse(null));
            st.setString(4, CatalogTime.format(operation.startedAt()));
            st.setString(5, node);
            st.executeUpdate();
        }
    }

    static void endOf(Connection c, SandboxId sandbox, String node) throws SQLException {
        try (var st = c.prepareStatement("DELETE FROM operations WHERE sandbox_id = ? AND node = ?")) {
            st.setString(1, sandbox.value());
            st.setString(2, node);
            st.executeUpdate();
        }
    }

    static void end(Connection c, SandboxId sandbox) throws SQLException {
        try (var st = c.prepareStatement("DELETE FROM operations WHERE sandbox_id = ?")) {
            st.setString(1, sandbox.value());
            st.executeUpdate();
        }
    }

    /** Oldest first, the sandbox id breaking ties. */
    static List<Operation> all(Connection c, String node) throws SQLException {
        try (var st = c.prepareStatement(
                "SELECT sandbox_id, kind, checkpoint_id, started_at FROM operations WHERE node = ? ORDER BY started_at, sandbox_id")) {
            st.setString(1, node);
            try (var rs = st.executeQuery()) {
                var out = new ArrayList<Operation>();
                while (rs.next()) out.add(read(rs));
                return out;
            }
        }
    }

    private static Operation read(ResultSet rs) throws SQLException {
        String sandbox = rs.getString("sandbox_id");
        try {
            return new Operation(new SandboxId(sandbox),
                    Operation.Kind.valueOf(rs.getString("kind").toUpperCase(Locale.ROOT)),
                    Optional.ofNullable(rs.getString("checkpoint_id")).map(CheckpointId::new),
                    CatalogTime.parse(rs.getString("started_at")));
        } catch (RuntimeException e) {
            throw new StasisException(ErrorCode.INTERNAL, "the catalog's record of the operation on sandbox " + sandbox
                    + " is unreadable: " + e.getMessage(), Map.of("sandbox", String.valueOf(sandbox)), e);
        }
    }
}
