package io.stasis.catalog.sql;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.VolumeCatalog;
import io.stasis.core.tenant.TenantId;
import io.stasis.core.volume.Volume;
import io.stasis.core.volume.VolumeId;
import io.stasis.core.volume.VolumeMount;
import io.stasis.core.volume.VolumeSnapshot;
import io.stasis.core.volume.VolumeSnapshotId;
import io.stasis.core.volume.VolumeSync;
import io.stasis.core.volume.VolumeSyncId;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** The SQL of the volume tables (V9). Callers hold the catalog's lock. */
final class VolumeTable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String VOLUME_COLUMNS = "id, tenant_id, name, size_mb, created_at, origin";
    private static final String SYNC_COLUMNS = "id, volume_id, volume_name, size_mb, streams, parent_id, snapshot, stream_bytes, created_at";

    private VolumeTable() {
    }

    static void insert(Connection c, Volume v, String node) throws SQLException {
        try (var st = c.prepareStatement("INSERT INTO volumes (" + VOLUME_COLUMNS + ", node) VALUES (?, ?, ?, ?, ?, ?, ?)")) {
            st.setString(1, v.id().value());
            st.setString(2, v.tenant().value());
            st.setString(3, v.name());
            st.setLong(4, v.sizeMb());
            st.setString(5, CatalogTime.format(v.createdAt()));
            st.setString(6, v.origin().orElse(null));
            st.setString(7, node);
            st.executeUpdate();
        } catch (SQLException e) {
            if (SqlConflict.of(e).filter(conflict -> !conflict.primaryKey()).isPresent()) throw StasisException.nameTaken(v.name());
            throw e;
        }
    }

    static Optional<Volume> find(Connection c, VolumeId id) throws SQLException {
        return volumes(c, "SELECT " + VOLUME_COLUMNS + " FROM volumes WHERE id = ?", id.value()).stream().findFirst();
    }

    static Optional<Volume> findByName(Connection c, TenantId tenant, String name) throws SQLException {
        return volumes(c, "SELECT " + VOLUME_COLUMNS + " FROM volumes WHERE tenant_id = ? AND name = ?", tenant.value(), name).stream().findFirst();
    }

    static List<Volume> ofTenant(Connection c, TenantId tenant) throws SQLException {
        return volumes(c, "SELECT " + VOLUME_COLUMNS + " FROM volumes WHERE tenant_id = ? ORDER BY created_at, id", tenant.value());
    }

    /** The volumes of {@code node}: their files are on its disk. */
    static List<Volume> all(Connection c, String node) throws SQLException {
        return volumes(c, "SELECT " + VOLUME_COLUMNS + " FROM volumes WHERE node = ? ORDER BY created_at, id", node);
    }

    /** Whether the tenant has a volume. */
    static boolean anyOf(Connection c, TenantId tenant) throws SQLException {
        return SqlStatements.exists(c, "SELECT 1 FROM volumes WHERE tenant_id = ?", tenant.value());
    }

    static void delete(Connection c, VolumeId id) throws SQLException {
        for (String sql : List.of("DELETE FROM volumes WHERE id = ?", "DELETE FROM volume_snapshots WHERE volume_id = ?",
                "DELETE FROM volume_syncs WHERE volume_id = ?", "DELETE FROM sandbox_volumes WHERE volume_id = ?",
                "DELETE FROM tokens WHERE scope_kind = 'volume' AND scope_id = ?")) {
            SqlStatements.update(c, sql, id.value());
        }
    }

    static void setMounts(Connection c, SandboxId sandbox, List<VolumeMount> mounts) throws SQLException {
        deleteMountsOf(c, sandbox);
        try (var st = c.prepareStatement("INSERT INTO sandbox_volumes (sandbox_id, position, volume_id, path, read_only) VALUES (?, ?, ?, ?, ?)")) {
            int i = 0;
            for (var m : mounts) {
                st.setString(1, sandbox.value());
                st.setInt(2, i++);
                st.setString(3, m.volume().value());
                st.setString(4, m.path());
                st.setInt(5, m.readOnly() ? 1 : 0);
                st.executeUpdate();
            }
        }
    }

    static void deleteMountsOf(Connection c, SandboxId sandbox) throws SQLException {
        SqlStatements.update(c, "DELETE FROM sandbox_volumes WHERE sandbox_id = ?", sandbox.value());
    }

    static List<VolumeMount> mountsOf(Connection c, SandboxId sandbox) throws SQLException {
        var out = new ArrayList<VolumeMount>();
        try (var st = prepare(c, "SELECT volume_id, path, read_only FROM sandbox_volumes WHERE sandbox_id = ? ORDER BY position", sandbox.value());
             ResultSet rs = st.executeQuery()) {
            while (rs.next()) out.add(new VolumeMount(new VolumeId(rs.getString(1)), rs.getString(2), rs.getInt(3) == 1));
        }
        return out;
    }

    static List<VolumeCatalog.Mounter> mountersOf(Connection c, VolumeId volume) throws SQLException {
        var out = new ArrayList<VolumeCatalog.Mounter>();
        try (var st = prepare(c, "SELECT m.sandbox_id, m.path, m.read_only FROM sandbox_volumes m JOIN sandboxes s ON s.id = m.sandbox_id"
                + " WHERE m.volume_id = ? AND s.state <> 'deleted' ORDER BY s.created_at, s.id, m.position", volume.value());
             ResultSet rs = st.executeQuery()) {
            while (rs.next()) out.add(new VolumeCatalog.Mounter(new SandboxId(rs.getString(1)), rs.getString(2), rs.getInt(3) == 1));
        }
        return out;
    }

    static void insertSnapshot(Connection c, VolumeSnapshot s) throws SQLException {
        try (var st = c.prepareStatement("INSERT INTO volume_snapshots (id, volume_id, created_at) VALUES (?, ?, ?)")) {
            st.setString(1, s.id().value());
            st.setString(2, s.volume().value());
            st.setString(3, CatalogTime.format(s.createdAt()));
            st.executeUpdate();
        }
    }

    static Optional<VolumeSnapshot> findSnapshot(Connection c, VolumeSnapshotId id) throws SQLException {
        return snapshots(c, "id = ?", id.value()).stream().findFirst();
    }

    static List<VolumeSnapshot> snapshotsOf(Connection c, VolumeId volume) throws SQLException {
        return snapshots(c, "volume_id = ?", volume.value());
    }

    private static List<VolumeSnapshot> snapshots(Connection c, String where, String arg) throws SQLException {
        var out = new ArrayList<VolumeSnapshot>();
        try (var st = prepare(c, "SELECT id, volume_id, created_at FROM volume_snapshots WHERE " + where + " ORDER BY created_at, id", arg);
             ResultSet rs = st.executeQuery()) {
            while (rs.next())
                out.add(new VolumeSnapshot(new VolumeSnapshotId(rs.getString(1)), new VolumeId(rs.getString(2)), CatalogTime.parse(rs.getString(3))));
        }
        return out;
    }

    static void deleteSnapshot(Connection c, VolumeSnapshotId id) throws SQLException {
        SqlStatements.update(c, "DELETE FROM volume_snapshots WHERE id = ?", id.value());
    }

    static void deleteSync(Connection c, VolumeSyncId id) throws SQLException {
        SqlStatements.update(c, "DELETE FROM volume_syncs WHERE id = ?", id.value());
    }

    static void insertSync(Connection c, VolumeSync s) throws SQLException {
        try (var st = c.prepareStatement("INSERT INTO volume_syncs (" + SYNC_COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
            st.setString(1, s.id().value());
            st.setString(2, s.volume().value());
            st.setString(3, s.volumeName());
            st.setLong(4, s.sizeMb());
            st.setString(5, JSON.writeValueAsString(s.streams()));
            st.setString(6, s.parent().map(VolumeSyncId::value).orElse(null));
            st.setString(7, s.snapshot());
            st.setLong(8, s.streamBytes());
            st.setString(9, CatalogTime.format(s.createdAt()));
            st.executeUpdate();
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a list of strings always serializes", e);
        }
    }

    static Optional<VolumeSync> findSync(Connection c, VolumeSyncId id) throws SQLException {
        return syncs(c, "id = ?", id.value()).stream().findFirst();
    }

    static List<VolumeSync> syncsOf(Connection c, VolumeId volume) throws SQLException {
        return syncs(c, "volume_id = ?", volume.value());
    }

    private static List<VolumeSync> syncs(Connection c, String where, String arg) throws SQLException {
        var out = new ArrayList<VolumeSync>();
        try (var st = prepare(c, "SELECT " + SYNC_COLUMNS + " FROM volume_syncs WHERE " + where + " ORDER BY created_at, id", arg);
             ResultSet rs = st.executeQuery()) {
            while (rs.next()) {
                List<String> streams;
                try {
                    streams = JSON.readValue(rs.getString(5), new TypeReference<List<String>>() { });
                } catch (JsonProcessingException e) {
                    throw new SQLException("unreadable streams of volume sync " + rs.getString(1), e);
                }
                out.add(new VolumeSync(new VolumeSyncId(rs.getString(1)), new VolumeId(rs.getString(2)), rs.getString(3), rs.getLong(4), streams,
                        Optional.ofNullable(rs.getString(6)).map(VolumeSyncId::new), rs.getString(7), rs.getLong(8),
                        CatalogTime.parse(rs.getString(9))));
            }
        }
        return out;
    }

    private static List<Volume> volumes(Connection c, String sql, String... args) throws SQLException {
        var out = new ArrayList<Volume>();
        try (var st = prepare(c, sql, args); ResultSet rs = st.executeQuery()) {
            while (rs.next())
                out.add(new Volume(new VolumeId(rs.getString(1)), new TenantId(rs.getString(2)), rs.getString(3), rs.getLong(4),
                        CatalogTime.parse(rs.getString(5)), Optional.ofNullable(rs.getString(6))));
        }
        return out;
    }

    private static PreparedStatement prepare(Connection c, String sql, String... args) throws SQLException {
        var st = c.prepareStatement(sql);
        for (int i = 0; i < args.length; i++) st.setString(i + 1, args[i]);
        return st;
    }

}
