package io.stasis.catalog.sql;

import io.stasis.core.tenant.QuotaHold;
import io.stasis.core.tenant.TenantUsage;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/** The SQL of the {@code quota_holds} table, and of what a node holds. */
final class QuotaHoldTable {
    /**
     * Sandboxes with processes hold a running slot and their memory, their bucket mounts' daemons' included; every
     * sandbox not being deleted holds its disk.
     */
    private static final String SANDBOX_LOADS = "SELECT node,"
            + " CASE WHEN state IN ('running', 'paused', 'standby') THEN 1 ELSE 0 END AS running_sandboxes,"
            + " CASE WHEN state IN ('running', 'paused', 'standby') THEN " + TenantTable.MEMORY_HELD + " ELSE 0 END AS memory_mb,"
            + " disk_mb FROM sandboxes WHERE state <> 'deleted'";
    private static final String LOADS = "SELECT node, sum(running_sandboxes), sum(memory_mb), sum(disk_mb) FROM (" + SANDBOX_LOADS
            + " UNION ALL SELECT node, running_sandboxes, memory_mb, disk_mb FROM quota_holds) loads";

    private QuotaHoldTable() {
    }

    /** The caller's transaction, after it took the {@code QUOTA_HOLD} turn. */
    static void hold(Connection c, String node, QuotaHold hold, QuotaHold.Admission admission, Instant now) throws SQLException {
        var tenantHeld = TenantTable.usage(c, hold.tenant(), true);
        var nodeHeld = loadOf(c, node); // one statement too: sandboxes and holds in one snapshot
        admission.check(tenantHeld, nodeHeld);
        try (var st = c.prepareStatement("INSERT INTO quota_holds (id, tenant_id, node, running_sandboxes, memory_mb, disk_mb, created_at)"
                + " VALUES (?, ?, ?, ?, ?, ?, ?)")) {
            st.setString(1, hold.id());
            st.setString(2, hold.tenant().value());
            st.setString(3, node);
            st.setInt(4, hold.demand().runningSandboxes());
            st.setLong(5, hold.demand().memoryMb());
            st.setLong(6, hold.demand().diskMb());
            st.setString(7, CatalogTime.format(now));
            st.executeUpdate();
        }
    }

    static void release(Connection c, String id) throws SQLException {
        SqlStatements.update(c, "DELETE FROM quota_holds WHERE id = ?", id);
    }

    static int releaseOf(Connection c, String node) throws SQLException {
        return SqlStatements.update(c, "DELETE FROM quota_holds WHERE node = ?", node);
    }

    static Map<String, TenantUsage> loads(Connection c) throws SQLException {
        try (var st = c.prepareStatement(LOADS + " GROUP BY node ORDER BY node"); var rs = st.executeQuery()) {
            var out = new LinkedHashMap<String, TenantUsage>();
            while (rs.next()) out.put(rs.getString(1), new TenantUsage(rs.getInt(2), rs.getLong(3), rs.getLong(4)));
            return out;
        }
    }

    private static TenantUsage loadOf(Connection c, String node) throws SQLException {
        try (var st = c.prepareStatement(LOADS + " WHERE node = ? GROUP BY node")) {
            st.setString(1, node);
            try (var rs = st.executeQuery()) {
                return rs.next() ? new TenantUsage(rs.getInt(2), rs.getLong(3), rs.getLong(4)) : TenantUsage.NONE;
            }
        }
    }
}
