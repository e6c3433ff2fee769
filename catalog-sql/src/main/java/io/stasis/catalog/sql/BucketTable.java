package io.stasis.catalog.sql;

import io.stasis.core.bucket.SandboxBucket;
import io.stasis.core.sandbox.SandboxId;
import java.net.URI;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/** {@code sandbox_buckets} (V10): the buckets each sandbox mounts, by position, with the secret's name only. */
final class BucketTable {
    private BucketTable() {
    }

    static void set(Connection c, SandboxId sandbox, List<SandboxBucket> buckets) throws SQLException {
        deleteOf(c, sandbox);
        try (var st = c.prepareStatement("INSERT INTO sandbox_buckets (sandbox_id, position, path, endpoint, region, bucket, prefix, read_only,"
                + " credentials_secret) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
            int i = 0;
            for (var b : buckets) {
                st.setString(1, sandbox.value());
                st.setInt(2, i++);
                st.setString(3, b.path());
                st.setString(4, b.endpoint().toString());
                st.setString(5, b.region());
                st.setString(6, b.bucket());
                st.setString(7, b.prefix());
                st.setInt(8, b.readOnly() ? 1 : 0);
                st.setString(9, b.credentialsSecret());
                st.executeUpdate();
            }
        }
    }

    static void deleteOf(Connection c, SandboxId sandbox) throws SQLException {
        try (var st = c.prepareStatement("DELETE FROM sandbox_buckets WHERE sandbox_id = ?")) {
            st.setString(1, sandbox.value());
            st.executeUpdate();
        }
    }

    static List<SandboxBucket> of(Connection c, SandboxId sandbox) throws SQLException {
        var out = new ArrayList<SandboxBucket>();
        try (var st = c.prepareStatement("SELECT path, endpoint, region, bucket, prefix, read_only, credentials_secret FROM sandbox_buckets"
                + " WHERE sandbox_id = ? ORDER BY position")) {
            st.setString(1, sandbox.value());
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next())
                    out.add(new SandboxBucket(rs.getString(1), URI.create(rs.getString(2)), rs.getString(3), rs.getString(4), rs.getString(5),
                            rs.getInt(6) == 1, rs.getString(7)));
            }
        }
        return out;
    }
}
