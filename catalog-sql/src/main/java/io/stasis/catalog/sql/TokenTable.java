package io.stasis.catalog.sql;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.stasis.core.auth.Permission;
import io.stasis.core.auth.ScopedToken;
import io.stasis.core.auth.TokenScope;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.tenant.TenantId;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/** The SQL of the {@code tokens} table. Callers hold the catalog's lock. */
final class TokenTable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String COLUMNS = "id, tenant_id, secret_hash, name, scope_kind, scope_id, permissions, created_at, expires_at";

    private TokenTable() {
    }

    static void insert(Connection c, ScopedToken token) throws SQLException {
        try (var st = c.prepareStatement("INSERT INTO tokens (" + COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
            st.setString(1, token.id());
            st.setString(2, token.tenant().value());
            st.setString(3, token.secretHash());
            st.setString(4, token.name().orElse(null));
            st.setString(5, token.scope().target().name().toLowerCase());
            st.setString(6, token.scope().resourceId());
            st.setString(7, permissionsJson(token));
            st.setString(8, CatalogTime.format(token.createdAt()));
            st.setString(9, CatalogTime.format(token.expiresAt()));
            st.executeUpdate();
        }
    }

    private static String permissionsJson(ScopedToken token) {
        try {
            return JSON.writeValueAsString(token.permissions().stream().map(Permission::wireName).sorted().toList());
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a list of strings always serializes", e);
        }
    }

    static Optional<ScopedToken> findByHash(Connection c, String secretHash) throws SQLException {
        return first(query(c, "SELECT " + COLUMNS + " FROM tokens WHERE secret_hash = ?", secretHash));
    }

    static Optional<ScopedToken> find(Connection c, String id) throws SQLException {
        return first(query(c, "SELECT " + COLUMNS + " FROM tokens WHERE id = ?", id));
    }

    static List<ScopedToken> ofTenant(Connection c, TenantId tenant) throws SQLException {
        return query(c, "SELECT " + COLUMNS + " FROM tokens WHERE tenant_id = ? ORDER BY created_at, id", tenant.value());
    }

    static void delete(Connection c, String id) throws SQLException {
        try (var st = c.prepareStatement("DELETE FROM tokens WHERE id = ?")) {
            st.setString(1, id);
            st.executeUpdate();
        }
    }

    static void deleteOfTenant(Connection c, TenantId tenant) throws SQLException {
        SqlStatements.update(c, "DELETE FROM tokens WHERE tenant_id = ?", tenant.value());
    }

    /** Tokens for a sandbox that is gone can do nothing any more. */
    static void deleteOfSandbox(Connection c, SandboxId sandbox) throws SQLException {
        try (var st = c.prepareStatement("DELETE FROM tokens WHERE scope_kind = 'sandbox' AND scope_id = ?")) {
            st.setString(1, sandbox.value());
            st.executeUpdate();
        }
    }

    static void deleteExpiredBefore(Connection c, Instant now) throws SQLException {
        try (var st = c.prepareStatement("DELETE FROM tokens WHERE expires_at < ?")) {
            st.setString(1, CatalogTime.format(now));
            st.executeUpdate();
        }
    }

    private static Optional<ScopedToken> first(List<ScopedToken> rows) {
        return rows.isEmpty() ? Optional.empty() : Optional.of(rows.getFirst());
    }

    private static List<ScopedToken> query(Connection c, String sql, String parameter) throws SQLException {
        try (var st = c.prepareStatement(sql)) {
            st.setString(1, parameter);
            var out = new ArrayList<ScopedToken>();
            try (var rs = st.executeQuery()) {
                while (rs.next()) out.add(read(rs));
            }
            return out;
        }
    }

    private static ScopedToken read(ResultSet rs) throws SQLException {
        String id = rs.getString("id");
        try {
            String scopeId = rs.getString("scope_id");
            TokenScope scope = switch (rs.getString("scope_kind")) {
                case "sandbox" -> new TokenScope.Sandbox(new SandboxId(scopeId));
                case "volume" -> new TokenScope.Volume(scopeId);
                default -> throw new IllegalStateException("unknown scope kind " + rs.getString("scope_kind"));
            };
            List<String> permissions = JSON.readValue(rs.getString("permissions"), new TypeReference<List<String>>() { });
            return new ScopedToken(id, new TenantId(rs.getString("tenant_id")), rs.getString("secret_hash"),
                    Optional.ofNullable(rs.getString("name")), scope,
                    permissions.stream().map(p -> Permission.parse(p, "permissions")).collect(Collectors.toSet()),
                    CatalogTime.parse(rs.getString("created_at")), CatalogTime.parse(rs.getString("expires_at")));
        } catch (JsonProcessingException | RuntimeException e) {
            throw new StasisException(ErrorCode.INTERNAL, "the catalog's record of token " + id + " is unreadable: " + e.getMessage(),
                    Map.of("token", String.valueOf(id)), e);
        }
    }
}
