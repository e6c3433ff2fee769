package io.stasis.catalog.sql;

import io.stasis.core.bucket.SandboxBuckets;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.RuntimeKind;
import io.stasis.core.tenant.Tenant;
import io.stasis.core.tenant.TenantId;
import io.stasis.core.tenant.TenantQuota;
import io.stasis.core.tenant.TenantUsage;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/** The SQL of the {@code tenants} table, and of what a tenant holds. Callers hold the catalog's lock. */
final class TenantTable {
    private static final String COLUMNS = "id, name, created_at, max_running_sandboxes, max_memory_mb, max_disk_mb, runtimes, "
            + "requests_per_second, request_burst, creates_per_minute";

    private TenantTable() {
    }

    static void insert(Connection c, Tenant tenant) throws SQLException {
        try (var st = c.prepareStatement("INSERT INTO tenants (" + COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
            st.setString(1, tenant.id().value());
            st.setString(2, tenant.name());
            st.setString(3, CatalogTime.format(tenant.createdAt()));
            bindQuota(st, 4, tenant.quota());
            st.executeUpdate();
        } catch (SQLException e) {
            if (SqlConflict.of(e).filter(conflict -> !conflict.primaryKey()).isPresent())
                throw new StasisException(ErrorCode.NAME_TAKEN, "a tenant named '" + tenant.name() + "' exists", Map.of("name", tenant.name()));
            throw e;
        }
    }

    static void update(Connection c, Tenant tenant) throws SQLException {
        try (var st = c.prepareStatement("UPDATE tenants SET max_running_sandboxes = ?, max_memory_mb = ?, max_disk_mb = ?, runtimes = ?, "
                + "requests_per_second = ?, request_burst = ?, creates_per_minute = ? WHERE id = ?")) {
            int next = bindQuota(st, 1, tenant.quota());
            st.setString(next, tenant.id().value());
            if (st.executeUpdate() == 0) throw new SQLException("no tenant row " + tenant.id());
        }
    }

    private static int bindQuota(PreparedStatement st, int index, TenantQuota quota) throws SQLException {
        bindOptional(st, index++, quota.runningSandboxes().map(Integer::longValue));
        bindOptional(st, index++, quota.memoryMb());
        bindOptional(st, index++, quota.diskMb());
        // "gvisor" or "gvisor,runc": the wire names, sorted
        st.setString(index++, quota.runtimes().map(kinds -> String.join(",", RuntimeKind.wireNames(kinds))).orElse(null));
        bindOptional(st, index++, quota.requestsPerSecond().map(Integer::longValue));
        bindOptional(st, index++, quota.requestBurst().map(Integer::longValue));
        bindOptional(st, index++, quota.createsPerMinute().map(Integer::longValue));
        return index;
    }

    private static void bindOptional(PreparedStatement st, int index, Optional<Long> value) throws SQLException {
        if (value.isPresent()) st.setLong(index, value.get());
        else st.setNull(index, Types.INTEGER);
    }

    static Optional<Tenant> find(Connection c, TenantId id) throws SQLException {
        var rows = query(c, "SELECT " + COLUMNS + " FROM tenants WHERE id = ?", id.value());
        return rows.isEmpty() ? Optional.empty() : Optional.of(rows.getFirst());
    }

    static List<Tenant> all(Connection c) throws SQLException {
        return query(c, "SELECT " + COLUMNS + " FROM tenants ORDER BY created_at, id", null);
    }

    /** Deletes the tenant's row only; the catalog deletes what it holds in the same transaction. */
    static void delete(Connection c, TenantId id) throws SQLException {
        SqlStatements.update(c, "DELETE FROM tenants WHERE id = ?", id.value());
    }

    /** What a sandbox with processes holds of memory, in a query of {@code sandboxes}: its limit and its bucket mounts' daemons. */
    static final String MEMORY_HELD = "(memory_mb + " + SandboxBuckets.DAEMON_MEMORY_MB
            + " * (SELECT count(*) FROM sandbox_buckets WHERE sandbox_buckets.sandbox_id = sandboxes.id))";

    /**
     * Running sandboxes are those with processes (running, paused or in standby); sandboxes being deleted hold
     * nothing any more. Disk counts the limits of every sandbox.
     */
    static TenantUsage usage(Connection c, TenantId tenant) throws SQLException {
        return usage(c, tenant, false);
    }

    /**
     * With {@code holds}, plus the tenant's quota holds, read in the same statement: one snapshot,
     * in which an operation's sandbox is recorded or its hold not yet released (it releases after
     * recording), so it counts at least once. Two statements could miss it between them.
     */
    static TenantUsage usage(Connection c, TenantId tenant, boolean holds) throws SQLException {
        String held = holds ? " + (SELECT coalesce(sum(%s), 0) FROM quota_holds WHERE tenant_id = ?)" : "";
        try (var st = c.prepareStatement("SELECT"
                + " coalesce(sum(CASE WHEN state IN ('running', 'paused', 'standby') THEN 1 ELSE 0 END), 0)" + held.formatted("running_sandboxes") + ","
                + " coalesce(sum(CASE WHEN state IN ('running', 'paused', 'standby') THEN " + MEMORY_HELD + " ELSE 0 END), 0)" + held.formatted("memory_mb") + ","
                + " coalesce(sum(disk_mb), 0)"
                + " + (SELECT coalesce(sum(size_mb), 0) FROM volumes WHERE tenant_id = ?)" // volumes count toward diskMb too
                + held.formatted("disk_mb")
                + " FROM sandboxes WHERE tenant_id = ? AND state <> 'deleted'")) {
            int parameters = holds ? 5 : 2;
            for (int i = 1; i <= parameters; i++) st.setString(i, tenant.value());
            try (var rs = st.executeQuery()) {
                rs.next();
                return new TenantUsage(rs.getInt(1), rs.getLong(2), rs.getLong(3));
            }
        }
    }

    private static List<Tenant> query(Connection c, String sql, String parameter) throws SQLException {
        try (var st = c.prepareStatement(sql)) {
            if (parameter != null) st.setString(1, parameter);
            var out = new ArrayList<Tenant>();
            try (var rs = st.executeQuery()) {
                while (rs.next()) out.add(read(rs));
            }
            return out;
        }
    }

    private static Tenant read(ResultSet rs) throws SQLException {
        String runtimes = rs.getString("runtimes");
        var quota = new TenantQuota(optional(rs, "max_running_sandboxes").map(Long::intValue), optional(rs, "max_memory_mb"),
                optional(rs, "max_disk_mb"), Optional.ofNullable(runtimes).map(text -> Arrays.stream(text.split(","))
                        .map(name -> RuntimeKind.parse("tenants.runtimes", name)).collect(Collectors.toSet())),
                optional(rs, "requests_per_second").map(Long::intValue), optional(rs, "request_burst").map(Long::intValue),
                optional(rs, "creates_per_minute").map(Long::intValue));
        return new Tenant(new TenantId(rs.getString("id")), rs.getString("name"), quota, CatalogTime.parse(rs.getString("created_at")));
    }

    private static Optional<Long> optional(ResultSet rs, String column) throws SQLException {
        long value = rs.getLong(column);
        return rs.wasNull() ? Optional.empty() : Optional.of(value);
    }
}
