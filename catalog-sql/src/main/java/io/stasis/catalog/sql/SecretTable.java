package io.stasis.catalog.sql;

import io.stasis.core.tenant.TenantId;
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
    static boolean put(Connection c, TenantId tenant, SealedSecret secret) throws SQLException {
        boolean existed = find(c, tenant, secret.name()).isPresent();
        try (var st = c.prepareStatement("INSERT INTO secrets (tenant_id, name, created_at, sealed) VALUES (?, ?, ?, ?)"
                + " ON CONFLICT (tenant_id, name) DO UPDATE SET created_at = excluded.created_at, sealed = excluded.sealed")) {
            st.setString(1, tenant.value());
            st.setString(2, secret.name());
            st.setString(3, CatalogTime.format(secret.createdAt()));
            st.setBytes(4, secret.sealed());
            st.executeUpdate();
        }
        return !existed;
    }

    static Optional<SealedSecret> find(Connection c, TenantId tenant, String name) throws SQLException {
        var rows = query(c, "SELECT name, created_at, sealed FROM secrets WHERE tenant_id = ? AND name = ?", tenant.value(), name);
        return rows.isEmpty() ? Optional.empty() : Optional.of(rows.getFirst());
    }

    static List<SealedSecret> ofTenant(Connection c, TenantId tenant) throws SQLException {
        return query(c, "SELECT name, created_at, sealed FROM secrets WHERE tenant_id = ? ORDER BY name", tenant.value());
    }

    static boolean delete(Connection c, TenantId tenant, String name) throws SQLException {
        try (var st = c.prepareStatement("DELETE FROM secrets WHERE tenant_id = ? AND name = ?")) {
            st.setString(1, tenant.value());
            st.setString(2, name);
            return st.executeUpdate() == 1;
        }
    }

    static void deleteOfTenant(Connection c, TenantId tenant) throws SQLException {
        SqlStatements.update(c, "DELETE FROM secrets WHERE tenant_id = ?", tenant.value());
    }

    private static List<SealedSecret> query(Connection c, String sql, String... parameters) throws SQLException {
        try (var st = c.prepareStatement(sql)) {
            for (int i = 0; i < parameters.length; i++) st.setString(i + 1, parameters[i]);
            var out = new ArrayList<SealedSecret>();
            try (var rs = st.executeQuery()) {
                while (rs.next()) out.add(new SealedSecret(rs.getString(1), CatalogTime.parse(rs.getString(2)), rs.getBytes(3)));
            }
            return out;
        }
    }
}
