package io.stasis.catalog.sql;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.network.SandboxNetwork;
import io.stasis.core.sandbox.SandboxId;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The SQL of the {@code sandbox_networks} table. Callers hold the catalog's lock. */
final class NetworkTable {
    private NetworkTable() {
    }

    /** Records the network of a sandbox on {@code node}; slots are per node (each is an address range of its host). */
    static void insert(Connection c, SandboxNetwork network, String node) throws SQLException {
        try (var st = c.prepareStatement("INSERT INTO sandbox_networks (sandbox_id, slot, policy, node) VALUES (?, ?, ?, ?)")) {
            st.setString(1, network.id().value());
            st.setInt(2, network.slot());
            st.setString(3, NetworkJson.toJson(network.policy()));
            st.setString(4, node);
            st.executeUpdate();
        } catch (SQLException e) {
            if (SqlConflict.of(e).isPresent())
                throw new StasisException(ErrorCode.INTERNAL, "network slot " + network.slot() + " or sandbox " + network.id()
                        + " is already in the catalog", Map.of("sandbox", network.id().value()), e);
            throw e;
        }
    }

    static void update(Connection c, SandboxNetwork network) throws SQLException {
        try (var st = c.prepareStatement("UPDATE sandbox_networks SET policy = ? WHERE sandbox_id = ?")) {
            st.setString(1, NetworkJson.toJson(network.policy()));
            st.setString(2, network.id().value());
            st.executeUpdate();
        }
    }

    static Optional<SandboxNetwork> find(Connection c, SandboxId id) throws SQLException {
        var rows = query(c, "SELECT sandbox_id, slot, policy FROM sandbox_networks WHERE sandbox_id = ?", id.value());
        return rows.isEmpty() ? Optional.empty() : Optional.of(rows.getFirst());
    }

    static List<SandboxNetwork> all(Connection c, String node) throws SQLException {
        return query(c, "SELECT sandbox_id, slot, policy FROM sandbox_networks WHERE node = ? ORDER BY slot", node);
    }

    static void delete(Connection c, SandboxId id) throws SQLException {
        try (var st = c.prepareStatement("DELETE FROM sandbox_networks WHERE sandbox_id = ?")) {
            st.setString(1, id.value());
            st.executeUpdate();
        }
    }

    private static List<SandboxNetwork> query(Connection c, String sql, String parameter) throws SQLException {
        try (var st = c.prepareStatement(sql)) {
            if (parameter != null) st.setString(1, parameter);
            var out = new ArrayList<SandboxNetwork>();
            try (var rs = st.executeQuery()) {
                while (rs.next())
                    out.add(new SandboxNetwork(new SandboxId(rs.getString(1)), rs.getInt(2), NetworkJson.fromJson(rs.getString(3))));
            }
            return out;
        }
    }
}
