package io.stasis.catalog.sqlite;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.stasis.core.auth.ApiKey;
import io.stasis.core.auth.ScopedToken;
import io.stasis.core.bucket.SandboxBucket;
import io.stasis.core.checkpoint.Checkpoint;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.checkpoint.CheckpointUpload;
import io.stasis.core.checkpoint.DurableImage;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.events.Event;
import io.stasis.core.journal.Operation;
import io.stasis.core.network.SandboxNetwork;
import io.stasis.core.preview.Preview;
import io.stasis.core.preview.PreviewId;
import io.stasis.core.sandbox.Page;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxQuery;
import io.stasis.core.secret.SealedSecret;
import io.stasis.core.spi.BucketCatalog;
import io.stasis.core.spi.Catalog;
import io.stasis.core.spi.VolumeCatalog;
import io.stasis.core.tenant.Tenant;
import io.stasis.core.tenant.TenantId;
import io.stasis.core.tenant.TenantUsage;
import io.stasis.core.volume.Volume;
import io.stasis.core.volume.VolumeId;
import io.stasis.core.volume.VolumeMount;
import io.stasis.core.volume.VolumeSnapshot;
import io.stasis.core.volume.VolumeSnapshotId;
import io.stasis.core.volume.VolumeSync;
import io.stasis.core.volume.VolumeSyncId;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.StringJoiner;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteErrorCode;
import org.sqlite.SQLiteException;

/**
 * The {@link Catalog} in one SQLite file.
 *
 * <p><b>Concurrency.</b> One connection, used by one caller at a time under a {@link ReentrantLock}
 * (not {@code synchronized}, which the server's virtual threads would have to queue on a monitor
 * for). Catalog calls are sub-millisecond point reads and single-row writes, so one connection
 * is not the bottleneck, and it gives every caller a consistent view without pool tuning. The
 * file is in WAL mode, so other processes (the sqlite3 shell, a backup) can read while we write.
 *
 * <p><b>Durability.</b> Every write is its own transaction. With {@code synchronous=NORMAL} in
 * WAL mode a committed write survives a crash of the process; a power loss can roll back the
 * last few commits, never corrupt the file.
 *
 * <p><b>Listing.</b> {@link #list} orders by (creation time, id) and never shows sandboxes in the
 * {@code deleted} state (they are being torn down and are already gone for callers); {@link #all}
 * returns them, since reconciliation must finish their teardown, and so does {@link #children}
 * (lineage is a fact about every record).
 *
 * <p><b>Operations.</b> {@link #completeOperation} writes the outcome and removes the operation in
 * one transaction, so after a crash a sandbox either still has its operation (and its old record)
 * or has its new record and no operation. {@link #delete} removes the sandbox's operation in the
 * same transaction; its checkpoints stay (a fork may start from a checkpoint of a deleted sandbox).
 *
 * <p><b>Events.</b> Ids come from an {@code AUTOINCREMENT} key: strictly increasing, never reused,
 * also across restarts and after old events are trimmed. Event data is stored as JSON and reads
 * back with integral numbers as {@link Long} and other numbers as {@link Double} (see
 * {@link JsonValues}); {@link #appendEvent} returns the event as it will read back.
 * <b>Retention</b>: the table is kept bounded by an {@link EventRetention} given to
 * {@link #open(Path, EventRetention)} ({@link EventRetention#DEFAULT}: the newest 100 000 events,
 * trimmed once at open and then every 1000 appends, in the append's own transaction), so a stream
 * resuming from an id older than the oldest kept event misses the trimmed ones.
 */
public final class SqliteCatalog implements Catalog, VolumeCatalog, BucketCatalog {
    private static final Logger log = LoggerFactory.getLogger(SqliteCatalog.class);
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");
    private static final int BUSY_TIMEOUT_MS = 10_000;
    private static final String SANDBOX_COLUMNS = "id, name, template, " + StateColumns.NAMES
            + ", created_at, cpus, memory_mb, pids, disk_mb, env, metadata, parent_id, checkpoint_id, lifecycle, tenant_id, generation";
    private static final String SANDBOX_PLACEHOLDERS = placeholders(SANDBOX_COLUMNS.split(",").length);
    /** Every column but id, in {@link #bindSandboxFields} order. */
    private static final String SANDBOX_ASSIGNMENTS = "name = ?, template = ?, " + StateColumns.ASSIGNMENTS
            + ", created_at = ?, cpus = ?, memory_mb = ?, pids = ?, disk_mb = ?, env = ?, metadata = ?, parent_id = ?, checkpoint_id = ?, lifecycle = ?, tenant_id = ?, generation = ?";

    private final Path file;
    private final Connection connection;
    private final EventRetention retention;
    private final ReentrantLock lock = new ReentrantLock();
    private boolean closed;
    private int appendsSinceTrim; // guarded by lock

    private SqliteCatalog(Path file, Connection connection, EventRetention retention) {
        this.file = file;
        this.connection = connection;
        this.retention = retention;
    }

    /** Opens the catalog with the {@link EventRetention#DEFAULT default event retention}; see {@link #open(Path, EventRetention)}. */
    public static SqliteCatalog open(Path dbFile) {
        return open(dbFile, EventRetention.DEFAULT);
    }

    /**
     * Opens (creating if needed) the catalog in {@code dbFile} and migrates its schema.
     * <p>Effects on success: the parent directories exist; the file exists with mode 0600; the
     * schema is current.
     * Events past {@code retention} are trimmed now and as events are appended.
     * <p>On failure: an {@code internal} error, e.g. when the file was written by a newer Stasis;
     * no connection is left open.
     */
    public static SqliteCatalog open(Path dbFile, EventRetention retention) {
        Path file = dbFile.toAbsolutePath().normalize();
        createOwnerOnly(file);
        var config = new SQLiteConfig();
        config.setJournalMode(SQLiteConfig.JournalMode.WAL);
        config.setSynchronous(SQLiteConfig.SynchronousMode.NORMAL);
        config.enforceForeignKeys(true);
        config.setBusyTimeout(BUSY_TIMEOUT_MS);
        // Take the write lock when a transaction starts, so a busy file makes us wait (busy_timeout)
        // instead of failing when a read transaction later tries to write.
        config.setTransactionMode(SQLiteConfig.TransactionMode.IMMEDIATE);
        Connection connection = null;
        try {
            connection = config.createConnection("jdbc:sqlite:" + file);
            var migrations = Migrations.bundled();
            var applied = migrations.apply(connection, file.toString());
            int trimmed = retention.bounded() ? EventTable.trim(connection, retention.keepNewest()) : 0;
            log.atInfo().addKeyValue("file", file).addKeyValue("schemaVersion", migrations.latestVersion())
                    .addKeyValue("migrationsApplied", applied.size()).addKeyValue("eventsTrimmed", trimmed).log("catalog opened");
            return new SqliteCatalog(file, connection, retention);
        } catch (SQLException | RuntimeException e) {
            if (connection != null) {
                try {
                    connection.close();
                } catch (SQLException closeFailure) {
                    e.addSuppressed(closeFailure);
                }
            }
            if (e instanceof StasisException se) throw se;
            throw new StasisException(ErrorCode.INTERNAL, "cannot open the catalog " + file + ": " + e.getMessage(),
                    Map.of("database", file.toString()), e);
        }
    }

    /** Creates the file 0600 before SQLite does (its -wal and -shm files copy the mode), or tightens an existing one. */
    private static void createOwnerOnly(Path file) {
        try {
            Files.createDirectories(file.getParent());
            if (Files.notExists(file)) {
                Files.createFile(file, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
            } else if (!Files.getPosixFilePermissions(file).equals(OWNER_ONLY)) {
                Files.setPosixFilePermissions(file, OWNER_ONLY);
            }
        } catch (IOException e) {
            throw new StasisException(ErrorCode.INTERNAL, "cannot create the catalog file " + file + ": " + e,
                    Map.of("database", file.toString()), e);
        }
    }

    @Override
    public void insert(Sandbox sandbox) {
        withConnection("insert sandbox", c -> {
            try (var st = c.prepareStatement("INSERT INTO sandboxes (" + SANDBOX_COLUMNS + ") VALUES (" + SANDBOX_PLACEHOLDERS + ")")) {
                st.setString(1, sandbox.id().value());
                bindSandboxFields(st, 2, sandbox);
                st.executeUpdate();
            } catch (SQLiteException e) {
                throwIfConstraint(e, sandbox);
                throw e;
            }
            return null;
        });
    }

    @Override
    public void update(Sandbox sandbox) {
        withConnection("update sandbox", c -> {
            updateRow(c, sandbox);
            return null;
        });
    }

    /** Replaces every column of the sandbox's row; {@code sandbox_not_found} if there is none. */
    private static void updateRow(Connection c, Sandbox sandbox) throws SQLException {
        int changed;
        try (var st = c.prepareStatement("UPDATE sandboxes SET " + SANDBOX_ASSIGNMENTS + " WHERE id = ?")) {
            int next = bindSandboxFields(st, 1, sandbox);
            st.setString(next, sandbox.id().value());
            changed = st.executeUpdate();
        } catch (SQLiteException e) {
            throwIfConstraint(e, sandbox);
            throw e;
        }
        // Updating a sandbox nobody recorded is a caller bug; saying so beats silently losing the write.
        if (changed == 0) throw StasisException.sandboxNotFound(sandbox.id().value());
    }

    /** Binds every column after id, starting at {@code index}; returns the next free index. */
    private static int bindSandboxFields(PreparedStatement st, int index, Sandbox s) throws SQLException {
        st.setString(index++, s.name().orElse(null));
        st.setString(index++, s.template());
        index = StateColumns.bind(st, index, s.state());
        st.setString(index++, CatalogTime.format(s.createdAt()));
        st.setDouble(index++, s.resources().cpus());
        st.setInt(index++, s.resources().memoryMb());
        st.setInt(index++, s.resources().pids());
        st.setInt(index++, s.resources().diskMb());
        st.setString(index++, StringMaps.toJson(s.env()));
        st.setString(index++, StringMaps.toJson(s.metadata()));
        st.setString(index++, s.parentId().map(SandboxId::value).orElse(null));
        st.setString(index++, s.checkpointId().map(CheckpointId::value).orElse(null));
        st.setString(index++, LifecycleJson.toJson(s.lifecycle()));
        st.setString(index++, s.tenant().value());
        st.setLong(index++, s.generation());
        return index;
    }

    /** Turns a uniqueness violation into the error callers understand; other errors pass through. */
    private static void throwIfConstraint(SQLiteException e, Sandbox sandbox) {
        String message = String.valueOf(e.getMessage());
        if (e.getResultCode() == SQLiteErrorCode.SQLITE_CONSTRAINT_UNIQUE && message.contains("sandboxes.name"))
            throw StasisException.nameTaken(sandbox.name().orElseThrow());
        if (e.getResultCode() == SQLiteErrorCode.SQLITE_CONSTRAINT_PRIMARYKEY)
            throw new StasisException(ErrorCode.INTERNAL, "sandbox " + sandbox.id() + " is already in the catalog",
                    Map.of("sandbox", sandbox.id().value()), e);
    }

    @Override
    public Optional<Sandbox> find(SandboxId id) {
        return withConnection("find sandbox", c -> queryOne(c, "SELECT " + SANDBOX_COLUMNS + " FROM sandboxes WHERE id = ?", id.value()));
    }

    @Override
    public Optional<Sandbox> findByName(TenantId tenant, String name) {
        return withConnection("find sandbox by name", c -> queryOne(c, "SELECT " + SANDBOX_COLUMNS
                + " FROM sandboxes WHERE tenant_id = ? AND name = ?", tenant.value(), name));
    }

    private static Optional<Sandbox> queryOne(Connection c, String sql, String... keys) throws SQLException {
        try (var st = c.prepareStatement(sql)) {
            for (int i = 0; i < keys.length; i++) st.setString(i + 1, keys[i]);
            try (var rs = st.executeQuery()) {
                return rs.next() ? Optional.of(readSandbox(rs)) : Optional.empty();
            }
        }
    }

    @Override
    public Page<Sandbox> list(SandboxQuery query) {
        var after = query.cursor().map(ListCursor::decode);
        var sql = new StringBuilder("SELECT " + SANDBOX_COLUMNS + " FROM sandboxes WHERE state <> 'deleted'");
        var args = new ArrayList<Object>();
        query.tenant().ifPresent(tenant -> {
            sql.append(" AND tenant_id = ?");
            args.add(tenant.value());
        });
        query.state().ifPresent(state -> {
            sql.append(" AND state = ?");
            args.add(state);
        });
        // json_each compares keys as plain strings: no JSON-path quoting of keys with '.' or '/'.
        query.metadata().forEach((key, value) -> {
            sql.append(" AND EXISTS (SELECT 1 FROM json_each(sandboxes.metadata) m WHERE m.key = ? AND m.value = ? AND m.type = 'text')");
            args.add(key);
            args.add(value);
        });
        after.ifPresent(cursor -> {
            sql.append(" AND (created_at, id) > (?, ?)");
            args.add(CatalogTime.format(cursor.createdAt()));
            args.add(cursor.id().value());
        });
        // One row more than asked tells whether another page exists.
        sql.append(" ORDER BY created_at, id LIMIT ?");
        args.add(query.limit() + 1);

        List<Sandbox> rows = withConnection("list sandboxes", c -> queryMany(c, sql.toString(), args));
        if (rows.size() <= query.limit()) return new Page<>(rows, Optional.empty());
        var items = rows.subList(0, query.limit());
        return new Page<>(items, Optional.of(ListCursor.after(items.getLast()).encode()));
    }

    @Override
    public List<Sandbox> all() {
        return withConnection("list all sandboxes",
                c -> queryMany(c, "SELECT " + SANDBOX_COLUMNS + " FROM sandboxes ORDER BY created_at, id", List.of()));
    }

    private static List<Sandbox> queryMany(Connection c, String sql, List<Object> args) throws SQLException {
        try (var st = c.prepareStatement(sql)) {
            for (int i = 0; i < args.size(); i++) st.setObject(i + 1, args.get(i));
            try (var rs = st.executeQuery()) {
                var out = new ArrayList<Sandbox>();
                while (rs.next()) out.add(readSandbox(rs));
                return out;
            }
        }
    }

    private static Sandbox readSandbox(ResultSet rs) throws SQLException {
        String id = rs.getString("id");
        try {
            return new Sandbox(
                    new SandboxId(id),
                    Optional.ofNullable(rs.getString("name")),
                    rs.getString("template"),
                    StateColumns.read(rs),
                    CatalogTime.parse(rs.getString("created_at")),
                    new Resources(rs.getDouble("cpus"), rs.getInt("memory_mb"), rs.getInt("pids"), rs.getInt("disk_mb")),
                    StringMaps.fromJson(rs.getString("env")),
                    StringMaps.fromJson(rs.getString("metadata")),
                    Optional.ofNullable(rs.getString("parent_id")).map(SandboxId::new),
                    Optional.ofNullable(rs.getString("checkpoint_id")).map(CheckpointId::new),
                    LifecycleJson.fromJson(rs.getString("lifecycle")),
                    new TenantId(rs.getString("tenant_id")),
                    rs.getLong("generation"));
        } catch (JsonProcessingException | RuntimeException e) {
            // A row this code cannot read means a damaged file or a schema mismatch, not a bad request.
            throw new StasisException(ErrorCode.INTERNAL, "the catalog's record of sandbox " + id + " is unreadable: " + e.getMessage(),
                    Map.of("sandbox", String.valueOf(id)), e);
        }
    }

    @Override
    public List<Sandbox> children(SandboxId parent) {
        return withConnection("list children",
                c -> queryMany(c, "SELECT " + SANDBOX_COLUMNS + " FROM sandboxes WHERE parent_id = ? ORDER BY created_at, id",
                        List.of(parent.value())));
    }

    /** Removes the sandbox, its operation and its previews, together. Its checkpoints stay. */
    @Override
    public void delete(SandboxId id) {
        inTransaction("delete sandbox", c -> {
            try (var st = c.prepareStatement("DELETE FROM sandboxes WHERE id = ?")) {
                st.setString(1, id.value());
                st.executeUpdate();
            }
            OperationTable.end(c, id);
            PreviewTable.deleteOf(c, id);
            NetworkTable.delete(c, id);
            TokenTable.deleteOfSandbox(c, id);
            VolumeTable.deleteMountsOf(c, id);
            BucketTable.deleteOf(c, id);
            DurableImageTable.deleteOf(c, id);
            return null;
        });
    }

    // --- bucket mounts ---

    @Override
    public void setBuckets(SandboxId sandbox, List<SandboxBucket> buckets) {
        inTransaction("set bucket mounts", c -> {
            BucketTable.set(c, sandbox, buckets);
            return null;
        });
    }

    @Override
    public List<SandboxBucket> bucketsOf(SandboxId sandbox) {
        return withConnection("list bucket mounts", c -> BucketTable.of(c, sandbox));
    }

    // --- volumes ---

    @Override
    public void insertVolume(Volume volume) {
        withConnection("insert volume", c -> {
            VolumeTable.insert(c, volume);
            return null;
        });
    }

    @Override
    public Optional<Volume> findVolume(VolumeId id) {
        return withConnection("find volume", c -> VolumeTable.find(c, id));
    }

    @Override
    public Optional<Volume> findVolumeByName(TenantId tenant, String name) {
        return withConnection("find volume", c -> VolumeTable.findByName(c, tenant, name));
    }

    @Override
    public List<Volume> volumesOf(TenantId tenant) {
        return withConnection("list volumes", c -> VolumeTable.ofTenant(c, tenant));
    }

    @Override
    public List<Volume> allVolumes() {
        return withConnection("list volumes", VolumeTable::all);
    }

    @Override
    public void deleteVolume(VolumeId id) {
        inTransaction("delete volume", c -> {
            VolumeTable.delete(c, id);
            return null;
        });
    }

    @Override
    public void setMounts(SandboxId sandbox, List<VolumeMount> mounts) {
        inTransaction("set mounts", c -> {
            VolumeTable.setMounts(c, sandbox, mounts);
            return null;
        });
    }

    @Override
    public List<VolumeMount> mountsOf(SandboxId sandbox) {
        return withConnection("list mounts", c -> VolumeTable.mountsOf(c, sandbox));
    }

    @Override
    public List<Mounter> mountersOf(VolumeId volume) {
        return withConnection("list mounters", c -> VolumeTable.mountersOf(c, volume));
    }

    @Override
    public void insertVolumeSnapshot(VolumeSnapshot snapshot) {
        withConnection("insert volume snapshot", c -> {
            VolumeTable.insertSnapshot(c, snapshot);
            return null;
        });
    }

    @Override
    public Optional<VolumeSnapshot> findVolumeSnapshot(VolumeSnapshotId id) {
        return withConnection("find volume snapshot", c -> VolumeTable.snapshots(c, "id = ?", id.value()).stream().findFirst());
    }

    @Override
    public List<VolumeSnapshot> volumeSnapshotsOf(VolumeId volume) {
        return withConnection("list volume snapshots", c -> VolumeTable.snapshots(c, "volume_id = ?", volume.value()));
    }

    @Override
    public void deleteVolumeSnapshot(VolumeSnapshotId id) {
        withConnection("delete volume snapshot", c -> {
            VolumeTable.deleteSnapshot(c, id);
            return null;
        });
    }

    @Override
    public void insertVolumeSync(VolumeSync sync) {
        withConnection("insert volume sync", c -> {
            VolumeTable.insertSync(c, sync);
            return null;
        });
    }

    @Override
    public Optional<VolumeSync> findVolumeSync(VolumeSyncId id) {
        return withConnection("find volume sync", c -> VolumeTable.syncs(c, "id = ?", id.value()).stream().findFirst());
    }

    @Override
    public List<VolumeSync> volumeSyncsOf(VolumeId volume) {
        return withConnection("list volume syncs", c -> VolumeTable.syncs(c, "volume_id = ?", volume.value()));
    }

    @Override
    public void deleteVolumeSync(VolumeSyncId id) {
        withConnection("delete volume sync", c -> {
            VolumeTable.deleteSync(c, id);
            return null;
        });
    }

    // --- networks ---

    @Override
    public void insertNetwork(SandboxNetwork network) {
        withConnection("insert network", c -> {
            NetworkTable.insert(c, network);
            return null;
        });
    }

    @Override
    public void updateNetwork(SandboxNetwork network) {
        withConnection("update network", c -> {
            NetworkTable.update(c, network);
            return null;
        });
    }

    @Override
    public Optional<SandboxNetwork> findNetwork(SandboxId id) {
        return withConnection("find network", c -> NetworkTable.find(c, id));
    }

    @Override
    public List<SandboxNetwork> allNetworks() {
        return withConnection("list networks", NetworkTable::all);
    }

    @Override
    public void deleteNetwork(SandboxId id) {
        withConnection("delete network", c -> {
            NetworkTable.delete(c, id);
            return null;
        });
    }

    // --- operations ---

    @Override
    public void beginOperation(Operation operation) {
        withConnection("begin operation", c -> {
            OperationTable.begin(c, operation);
            return null;
        });
    }

    /**
     * Replaces the sandbox's record with {@code outcome} and removes its operation, in one
     * transaction. {@code sandbox_not_found} if the sandbox has no record; nothing changes then
     * (the operation stays).
     */
    @Override
    public void completeOperation(Sandbox outcome) {
        inTransaction("complete operation", c -> {
            // Either order is atomic; ending first means a failed update must roll the end back,
            // which the tests check.
            OperationTable.end(c, outcome.id());
            updateRow(c, outcome);
            return null;
        });
    }

    /** Removes the sandbox's operation, if any. Idempotent. */
    @Override
    public void abandonOperation(SandboxId sandbox) {
        withConnection("abandon operation", c -> {
            OperationTable.end(c, sandbox);
            return null;
        });
    }

    /** Every operation in progress, oldest first. */
    @Override
    public List<Operation> pendingOperations() {
        return withConnection("list pending operations", OperationTable::all);
    }

    // --- checkpoints ---

    /** Records a checkpoint; {@code internal} if its id is already recorded. */
    @Override
    public void insertCheckpoint(Checkpoint checkpoint) {
        withConnection("insert checkpoint", c -> {
            CheckpointTable.insert(c, checkpoint);
            return null;
        });
    }

    @Override
    public Optional<Checkpoint> findCheckpoint(CheckpointId id) {
        return withConnection("find checkpoint", c -> CheckpointTable.find(c, id));
    }

    /** Oldest first, the id breaking ties; also for a sandbox that is gone. */
    @Override
    public List<Checkpoint> checkpointsOf(SandboxId sandbox) {
        return withConnection("list checkpoints of a sandbox", c -> CheckpointTable.ofSandbox(c, sandbox));
    }

    /** Oldest first, the id breaking ties. */
    @Override
    public List<Checkpoint> allCheckpoints() {
        return withConnection("list checkpoints", CheckpointTable::all);
    }

    @Override
    public void deleteCheckpoint(CheckpointId id) {
        withConnection("delete checkpoint", c -> {
            CheckpointTable.delete(c, id);
            return null;
        });
    }

    @Override
    public void setCheckpointSpares(CheckpointId id, int count) {
        withConnection("set checkpoint spares", c -> {
            CheckpointTable.setSpares(c, id, count);
            return null;
        });
    }

    @Override
    public Map<CheckpointId, Integer> checkpointSpares() {
        return withConnection("list checkpoint spares", CheckpointTable::spares);
    }

    @Override
    public void recordUpload(CheckpointUpload upload) {
        withConnection("record checkpoint upload", c -> {
            UploadTable.upsert(c, upload);
            return null;
        });
    }

    @Override
    public Optional<CheckpointUpload> findUpload(CheckpointId id) {
        return withConnection("find checkpoint upload", c -> UploadTable.find(c, id));
    }

    @Override
    public void recordDurableImage(SandboxId sandbox, DurableImage image) {
        inTransaction("record durable image", c -> {
            DurableImageTable.record(c, sandbox, image);
            return null;
        });
    }

    @Override
    public Optional<DurableImage> durableImage(SandboxId sandbox) {
        return withConnection("find durable image", c -> DurableImageTable.find(c, sandbox));
    }

    @Override
    public List<CheckpointUpload> allUploads() {
        return withConnection("list checkpoint uploads", UploadTable::all);
    }

    @Override
    public void deleteUpload(CheckpointId id) {
        withConnection("delete checkpoint upload", c -> {
            UploadTable.delete(c, id);
            return null;
        });
    }

    // --- events ---

    /**
     * Stores the event (its {@code id} is ignored) under the next id and returns it with that id
     * and its data as it will read back. {@link IllegalArgumentException} if the data holds a
     * value JSON cannot carry exactly (see {@link JsonValues}). Every {@code trimEvery} appends the
     * same transaction also trims the table to the retention.
     */
    @Override
    public Event appendEvent(Event event) {
        String dataJson = JsonValues.toJson(event.data()); // refuses bad data before touching the file
        var data = JsonValues.normalize(event.data());
        return inTransaction("append event", c -> {
            long id = EventTable.append(c, event, dataJson);
            if (retention.bounded() && ++appendsSinceTrim >= retention.trimEvery()) {
                int trimmed = EventTable.trim(c, retention.keepNewest());
                appendsSinceTrim = 0;
                log.atDebug().addKeyValue("trimmed", trimmed).addKeyValue("newestId", id).log("events trimmed");
            }
            return new Event(id, event.at(), event.type(), event.sandbox(), data, event.tenant());
        });
    }

    /** At most {@code limit} events with an id above {@code afterId}, in id order; {@code limit} 0 gives none. */
    @Override
    public List<Event> eventsAfter(long afterId, Optional<SandboxId> sandbox, Optional<TenantId> tenant, int limit) {
        if (limit < 0) throw new IllegalArgumentException("limit must not be negative, was " + limit);
        if (limit == 0) return List.of();
        return withConnection("list events", c -> EventTable.after(c, afterId, sandbox, tenant, limit));
    }

    @Override
    public void insertApiKey(ApiKey key) {
        withConnection("insert api key", c -> {
            try (var st = c.prepareStatement("INSERT INTO api_keys (id, secret_hash, root, created_at, tenant_id) VALUES (?, ?, ?, ?, ?)")) {
                st.setString(1, key.id());
                st.setString(2, key.secretHash());
                st.setInt(3, key.root() ? 1 : 0);
                st.setString(4, CatalogTime.format(key.createdAt()));
                st.setString(5, key.tenant().value());
                st.executeUpdate();
            } catch (SQLiteException e) {
                if (e.getResultCode() == SQLiteErrorCode.SQLITE_CONSTRAINT_UNIQUE
                        || e.getResultCode() == SQLiteErrorCode.SQLITE_CONSTRAINT_PRIMARYKEY)
                    throw new StasisException(ErrorCode.INTERNAL, "API key " + key.id() + " collides with a stored key (same id or secret)",
                            Map.of("key", key.id()), e);
                throw e;
            }
            return null;
        });
    }

    @Override
    public Optional<ApiKey> findApiKeyByHash(String secretHash) {
        return withConnection("find api key", c -> {
            var keys = apiKeys(c, "secret_hash = ?", secretHash);
            return keys.isEmpty() ? Optional.<ApiKey>empty() : Optional.of(keys.getFirst());
        });
    }

    @Override
    public List<ApiKey> apiKeysOf(TenantId tenant) {
        return withConnection("list api keys", c -> apiKeys(c, "tenant_id = ?", tenant.value()));
    }

    private static List<ApiKey> apiKeys(Connection c, String condition, String parameter) throws SQLException {
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

    @Override
    public void deleteApiKey(String id) {
        withConnection("delete api key", c -> {
            try (var st = c.prepareStatement("DELETE FROM api_keys WHERE id = ?")) {
                st.setString(1, id);
                st.executeUpdate();
            }
            return null;
        });
    }

    // --- tenants ---

    @Override
    public void insertTenant(Tenant tenant) {
        withConnection("insert tenant", c -> {
            TenantTable.insert(c, tenant);
            return null;
        });
    }

    @Override
    public void updateTenant(Tenant tenant) {
        withConnection("update tenant", c -> {
            TenantTable.update(c, tenant);
            return null;
        });
    }

    @Override
    public Optional<Tenant> findTenant(TenantId id) {
        return withConnection("find tenant", c -> TenantTable.find(c, id));
    }

    @Override
    public List<Tenant> allTenants() {
        return withConnection("list tenants", TenantTable::all);
    }

    @Override
    public boolean deleteTenantIfEmpty(TenantId id) {
        return inTransaction("delete tenant", c -> TenantTable.deleteIfEmpty(c, id));
    }

    @Override
    public TenantUsage usage(TenantId tenant) {
        return withConnection("tenant usage", c -> TenantTable.usage(c, tenant));
    }

    // --- scoped tokens ---

    @Override
    public void insertToken(ScopedToken token) {
        withConnection("insert token", c -> {
            TokenTable.insert(c, token);
            return null;
        });
    }

    @Override
    public Optional<ScopedToken> findTokenByHash(String secretHash) {
        return withConnection("find token", c -> TokenTable.findByHash(c, secretHash));
    }

    @Override
    public Optional<ScopedToken> findToken(String id) {
        return withConnection("find token", c -> TokenTable.find(c, id));
    }

    @Override
    public List<ScopedToken> tokensOf(TenantId tenant) {
        return withConnection("list tokens", c -> TokenTable.ofTenant(c, tenant));
    }

    @Override
    public void deleteToken(String id) {
        withConnection("delete token", c -> {
            TokenTable.delete(c, id);
            return null;
        });
    }

    @Override
    public void deleteTokensExpiredBefore(Instant now) {
        withConnection("delete expired tokens", c -> {
            TokenTable.deleteExpiredBefore(c, now);
            return null;
        });
    }

    @Override
    public boolean hasRootKey() {
        return withConnection("check root key", c -> {
            try (var st = c.prepareStatement("SELECT EXISTS (SELECT 1 FROM api_keys WHERE root = 1)");
                 var rs = st.executeQuery()) {
                return rs.next() && rs.getInt(1) == 1;
            }
        });
    }

    // --- previews ---

    @Override
    public boolean insertPreview(Preview preview) {
        return withConnection("insert preview", c -> PreviewTable.insert(c, preview));
    }

    @Override
    public Optional<Preview> findPreview(PreviewId id) {
        return withConnection("find preview", c -> PreviewTable.find(c, id));
    }

    /** Oldest first, the id breaking ties. */
    @Override
    public List<Preview> previewsOf(SandboxId sandbox) {
        return withConnection("list previews of a sandbox", c -> PreviewTable.ofSandbox(c, sandbox));
    }

    @Override
    public void deletePreview(PreviewId id) {
        withConnection("delete preview", c -> {
            PreviewTable.delete(c, id);
            return null;
        });
    }

    /** Closes the connection. Idempotent; later calls fail with {@code internal}. */
    @Override
    public void close() {
        lock.lock();
        try {
            if (closed) return;
            closed = true;
            connection.close();
            log.atInfo().addKeyValue("file", file).log("catalog closed");
        } catch (SQLException e) {
            throw failure("close", e);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public String toString() {
        return "SqliteCatalog[" + file + "]";
    }

    @FunctionalInterface
    private interface SqlWork<T> {
        T run(Connection connection) throws SQLException;
    }

    /**
     * Runs {@code work} alone on the connection in one transaction: all of it is committed, or on
     * any exception none of it.
     */
    private <T> T inTransaction(String step, SqlWork<T> work) {
        return withConnection(step, c -> {
            c.setAutoCommit(false);
            try {
                T result = work.run(c);
                c.commit();
                return result;
            } catch (SQLException | RuntimeException e) {
                try {
                    c.rollback();
                } catch (SQLException rollbackFailure) {
                    e.addSuppressed(rollbackFailure);
                }
                throw e;
            } finally {
                c.setAutoCommit(true);
            }
        });
    }

    private static String placeholders(int count) {
        var joiner = new StringJoiner(", ");
        for (int i = 0; i < count; i++) joiner.add("?");
        return joiner.toString();
    }

    /** Runs {@code work} alone on the connection; SQL errors become {@code internal} naming the step. */
    private <T> T withConnection(String step, SqlWork<T> work) {
        lock.lock();
        try {
            if (closed) throw new StasisException(ErrorCode.INTERNAL, "the catalog " + file + " is closed", Map.of("step", step));
            return work.run(connection);
        } catch (SQLException e) {
            throw failure(step, e);
        } finally {
            lock.unlock();
        }
    }

    private StasisException failure(String step, SQLException e) {
        var details = new LinkedHashMap<String, Object>();
        details.put("step", "catalog " + step);
        details.put("database", file.toString());
        return new StasisException(ErrorCode.INTERNAL, "catalog " + step + " failed: " + e.getMessage(), details, e);
    }

    // --- secrets ---

    @Override
    public boolean putSecret(TenantId tenant, SealedSecret secret) {
        return inTransaction("put secret", c -> SecretTable.put(c, tenant, secret));
    }

    @Override
    public Optional<SealedSecret> findSecret(TenantId tenant, String name) {
        return withConnection("find secret", c -> SecretTable.find(c, tenant, name));
    }

    @Override
    public List<SealedSecret> secretsOf(TenantId tenant) {
        return withConnection("list secrets", c -> SecretTable.ofTenant(c, tenant));
    }

    @Override
    public boolean deleteSecret(TenantId tenant, String name) {
        return withConnection("delete secret", c -> SecretTable.delete(c, tenant, name));
    }
}
