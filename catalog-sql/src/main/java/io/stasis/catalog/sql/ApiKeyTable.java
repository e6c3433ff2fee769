package io.stasis.catalog.sql;

import io.stasis.core.auth.ApiKey;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.tenant.TenantId;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The SQL of the {@code api_keys} table. Callers hold the catalog's lock. */
final class ApiKeyTable {
    private ApiKeyTable() {
    }

    /** {@code internal} if the id or the secret's hash is already stored. */
    static void insert(Connection c, ApiKey key) throws SQLException {
        try (var st = c.prepareStatement("INSERT INTO api_keys (id, secret_hash, root, created_at, tenant_id) VALUES (?, ?, ?, ?, ?)")) {
            st.setString(1, key.id());
            st.setString(2, key.secretHash());
            st.setInt(3, key.root() ? 1 : 0);
            st.setString(4, CatalogTime.format(key.createdAt()));
            st.setString(5, key.tenant().value());
            st.executeUpdate();
        } catch (SQLException e) {
            if (SqlConflict.of(e).isPresent())
                throw new StasisException(ErrorCode.INTERNAL, "API key " + key.id() + " collides with a stored key (same id or secret)",
                        Map.of("key", key.id()), e);
            throw e;
        }
    }

    static Optional<ApiKey> findByHash(Connection c, String secretHash) throws SQLException {
        var keys = query(c, "secret_hash = ?", secretHash);
        return keys.isEmpty() ? Optional.empty() : Optional.of(keys.getFirst());
    }

    /** Oldest first, the id breaking ties. */
    static List<ApiKey> ofTenant(Connection c, TenantId tenant) throws SQLException {
        return query(c, "tenant_id = ?", tenant.value());
    }

    static boolean hasRoot(Connection c) throws SQLException {
        try (var st = c.prepareStatement("SELECT EXISTS (SELECT 1 FROM api_keys WHERE root = 1)");
             var rs = st.executeQuery()) {
            return rs.next() && rs.getBoolean(1);
        }
    }

    static void delete(Connection c, String id) throws SQLException {
        SqlStatements.update(c, "DELETE FROM api_keys WHERE id = ?", id);
    }

    static void deleteOfTenant(Connection c, TenantId tenant) throws SQLException {
        SqlStatements.update(c, "DELETE FROM api_keys WHERE tenant_id = ?", tenant.value());
    }

    private static List<ApiKey> query(Connection c, String condition, String parameter) throws SQLException {
        try (var st = c.prepareStatement("SELECT id, tenant_id, secret_hash, root, created_at FROM api_keys WHERE " + condition
                + " ORDER BY created_at, id")) {
            st.setString(1, parameter);
            var out = new ArrayList<ApiKey>();
            try (var rs = st.executeQuery()) {
                while (rs.next())
                    out.add(new ApiKey(rs.getString("id"), new TenantId(rs.getString("tenant_id")), rs.getString("secret_hash"),
                            rs.getInt("root") == 1, CatalogTime.parse(rs.getString("created_at"))));
            }
            return out;
        }
    }
}
