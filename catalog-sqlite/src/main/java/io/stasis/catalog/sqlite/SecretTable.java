package io.stasis.catalog.sqlite;

import io.stasis.core.secret.SealedSecret;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** The SQL of the {@code secrets} table. Callers hold the catalog's lock. */
final class SecretTable {
    private SecretTable() {
    }

    /** Inserts or replaces; returns whether the name was new. */
    static boolean put(Connection c, SealedSecret secret) throws SQLException {
        boolean existed = find(c, secret.name()).isPresent();
        try (var st = c.prepareStatement("INSERT INTO secrets (name, created_at, sealed) VALUES (?, ?, ?)"
                + " ON CONFLICT (name) DO UPDATE SET created_at = excluded.created_at, sealed = excluded.sealed")) {
            st.setString(1, secret.name());
            st.setString(2, CatalogTime.format(secret.createdAt()));
            st.setBytes(3, secret.sealed());
            st.executeUpdate();
        }
        return !existed;
    }

    static Optional<SealedSecret> find(Connection c, String name) throws SQLException {
        var rows = query(c, "SELECT name, created_at, sealed FROM secrets WHERE name = ?", name);
        return rows.isEmpty() ? Optional.empty() : Optional.of(rows.getFirst());
    }

    static List<SealedSecret> all(Connection c) throws SQLException {
        return query(c, "SELECT name, created_at, sealed FROM secrets ORDER BY name", null);
    }

    static boolean delete(Connection c, String name) throws SQLException {
        try (var st = c.prepareStatement("DELETE FROM secrets WHERE name = ?")) {
            st.setString(1, name);
            return st.executeUpdate() == 1;
        }
    }

    private static List<SealedSecret> query(Connection c, String sql, String parameter) throws SQLException {
        try (var st = c.prepareStatement(sql)) {
            if (parameter != null) st.setString(1, parameter);
            var out = new ArrayList<SealedSecret>();
            try (var rs = st.executeQuery()) {
                while (rs.next()) out.add(new SealedSecret(rs.getString(1), CatalogTime.parse(rs.getString(2)), rs.getBytes(3)));
            }
            return out;
        }
    }
}
