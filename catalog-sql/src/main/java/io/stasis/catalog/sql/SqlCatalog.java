package io.stasis.catalog.sql;

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
import io.stasis.core.node.Node;
import io.stasis.core.node.NodeCapacity;
import io.stasis.core.network.SandboxNetwork;
import io.stasis.core.preview.Preview;
import io.stasis.core.preview.PreviewId;
import io.stasis.core.sandbox.Page;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxQuery;
import io.stasis.core.secret.SealedSecret;
import io.stasis.core.spi.BucketCatalog;
import io.stasis.core.spi.Catalog;
import io.stasis.core.spi.VolumeCatalog;
import io.stasis.core.tenant.QuotaHold;
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
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.sqlite.SQLiteConfig;

/**
 * The {@link Catalog} in SQL: one SQLite file (the embedded default, {@link #openSqlite}) or a
 * PostgreSQL database ({@link #openPostgres}). The tables and their SQL are the same on both; what
 * differs is in {@link SqlEngine}.
 *
 * <p><b>Concurrency.</b> SQLite: one connection for writes, used by one caller at a time under a
 * lock, and a few more for reads, each read one transaction (one snapshot) on its own (see
 * {@link CatalogConnection.SqliteConnections}): a read never waits for a write, and sees every write
 * committed before it began. The file is in WAL mode, so other processes (the sqlite3 shell, a
 * backup) can read while we write too. PostgreSQL: a pool of connections ({@link PostgresConnections}), each call
 * on its own, at the database's default isolation (read committed); a change spanning rows is one
 * transaction, as on SQLite.
 *
 * <p><b>Durability.</b> Every write is its own transaction. With {@code synchronous=NORMAL} in
 * WAL mode a committed SQLite write survives a crash of the process; a power loss can roll back the
 * last few commits, never corrupt the file. PostgreSQL's durability is its server's.
 *
 * <p><b>Layout.</b> The SQL of each table lives in its {@code *Table} class; this class opens the
 * database and delegates, composing the tables in one transaction where a change spans them.
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
 * <p><b>Events.</b> Ids come from an {@code AUTOINCREMENT} key (an identity column in PostgreSQL):
 * strictly increasing, never reused, also across restarts and after old events are trimmed. Appends
 * take turns, so ids become visible in order. Event data is stored as JSON and reads
 * back with integral numbers as {@link Long} and other numbers as {@link Double} (see
 * {@link JsonValues}); {@link #appendEvent} returns the event as it will read back.
 * <b>Retention</b>: the table is kept bounded by an {@link EventRetention} given to
 * {@link #openSqlite(Path, EventRetention)} or {@link #openPostgres} ({@link EventRetention#DEFAULT}: the newest 100 000 events,
 * trimmed once at open and then every 1000 appends, in the append's own transaction), so a stream
 * resuming from an id older than the oldest kept event misses the trimmed ones.
 */
public final class SqlCatalog implements Catalog, VolumeCatalog, BucketCatalog {
    private static final Logger log = LoggerFactory.getLogger(SqlCatalog.class);
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");
    private static final int BUSY_TIMEOUT_MS = 10_000;

    private final String database;
    private final SqlEngine engine;
    private final String node;
    private final CatalogConnection db;
    private final EventAppender events;

    private SqlCatalog(String database, SqlEngine engine, String node, CatalogConnection.ConnectionSource source, EventRetention retention) {
        this.database = database;
        this.engine = engine;
        this.node = node;
        this.db = new CatalogConnection(database, source);
        this.events = new EventAppender(engine, retention);
    }

    /** The node name of a catalog opened without one: a SQLite file is one node's, whatever its name. */
    public static final String LOCAL_NODE = "local";

    /** Opens the catalog with the {@link EventRetention#DEFAULT default event retention}; see {@link #openSqlite(Path, EventRetention, String)}. */
    public static SqlCatalog openSqlite(Path dbFile) {
        return openSqlite(dbFile, EventRetention.DEFAULT, LOCAL_NODE);
    }

    /** {@link #openSqlite(Path, EventRetention, String)} for the {@link #LOCAL_NODE}. */
    public static SqlCatalog openSqlite(Path dbFile, EventRetention retention) {
        return openSqlite(dbFile, retention, LOCAL_NODE);
    }

    /**
     * Opens (creating if needed) the catalog in {@code dbFile} and migrates its schema.
     * <p>Effects on success: the parent directories exist; the file exists with mode 0600; the
     * schema is current; every record is {@code node}'s (a SQLite file is one node's: renaming it loses nothing).
     * Events past {@code retention} are trimmed now and as events are appended.
     * <p>On failure: an {@code internal} error, e.g. when the file was written by a newer Stasis;
     * no connection is left open.
     */
    public static SqlCatalog openSqlite(Path dbFile, EventRetention retention, String node) {
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
            prepare(SqlEngine.SQLITE, connection, file.toString(), retention);
            NodeTable.claim(connection, node, true);
            return new SqlCatalog(file.toString(), SqlEngine.SQLITE, node,
                    new CatalogConnection.SqliteConnections(connection, () -> openSqliteReader(file)), retention);
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

    /** A connection for reads of the catalog in {@code file}: each read one transaction, and a write refused. */
    private static Connection openSqliteReader(Path file) throws SQLException {
        var config = new SQLiteConfig();
        config.setBusyTimeout(BUSY_TIMEOUT_MS);
        var reader = config.createConnection("jdbc:sqlite:" + file);
        try (var st = reader.createStatement()) {
            st.execute("PRAGMA query_only = ON");
        }
        reader.setAutoCommit(false);
        return reader;
    }

    /**
     * Opens the catalog in the PostgreSQL database at {@code location} for {@code node}, and migrates its schema.
     * <p>Effects on success: the schema is current; this service holds the node's lock until
     * {@link #close}, so a second service with the same node name is refused (services of other names
     * share the catalog); records of no node (moved from SQLite) are this node's; a pool of connections is open.
     * Events past {@code retention} are trimmed now and as events are appended.
     * <p>On failure: an {@code internal} error naming the database (never its password), e.g. when it
     * cannot be reached, refuses the credentials, has the node running already, or was written by a
     * newer Stasis; nothing is left open.
     */
    public static SqlCatalog openPostgres(PostgresLocation location, EventRetention retention, String node) {
        PostgresConnections connections;
        try {
            connections = PostgresConnections.open(location);
        } catch (RuntimeException e) {
            throw new StasisException(ErrorCode.INTERNAL, "cannot open the catalog " + location + ": " + rootMessage(e),
                    Map.of("database", location.toString()), e);
        }
        try {
            connections.claim(node);
            var connection = connections.borrow();
            try {
                prepare(SqlEngine.POSTGRESQL, connection, location.toString(), retention);
                NodeTable.claim(connection, node, false);
            } finally {
                connections.giveBack(connection);
            }
            return new SqlCatalog(location.toString(), SqlEngine.POSTGRESQL, node, connections, retention);
        } catch (SQLException | RuntimeException e) {
            try {
                connections.close();
            } catch (SQLException closeFailure) {
                e.addSuppressed(closeFailure);
            }
            if (e instanceof StasisException se) throw se;
            throw new StasisException(ErrorCode.INTERNAL, "cannot open the catalog " + location + ": " + e.getMessage(),
                    Map.of("database", location.toString()), e);
        }
    }

    /** The database, as errors and logs name it (a file, or a PostgreSQL URL without its password). */
    public String database() {
        return database;
    }

    /** Whether nothing was ever stored: every table empty but for the default tenant the schema starts with. */
    boolean isFresh() {
        return db.read("check for content", c -> {
            for (String table : SqliteToPostgres.TABLES) {
                String extra = table.equals("tenants") ? " WHERE id <> 'ten_default'" : "";
                try (var st = c.prepareStatement("SELECT EXISTS (SELECT 1 FROM " + table + extra + ")"); var rs = st.executeQuery()) {
                    if (rs.next() && rs.getBoolean(1)) return false;
                }
            }
            return true;
        });
    }

    CatalogConnection connection() {
        return db;
    }

    /** The innermost cause's message: the pool wraps the driver's "password authentication failed for user ...". */
    private static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) root = root.getCause();
        return root == e ? String.valueOf(e.getMessage()) : e.getMessage() + ": " + root.getMessage();
    }

    /** Migrates the schema and trims old events, on a connection in auto-commit mode. */
    private static void prepare(SqlEngine engine, Connection connection, String database, EventRetention retention) throws SQLException {
        var migrations = Migrations.bundled(engine);
        var applied = migrations.apply(connection, database);
        int trimmed = retention.bounded() ? EventTable.trim(connection, retention.keepNewest()) : 0;
        log.atInfo().addKeyValue("database", database).addKeyValue("engine", engine).addKeyValue("schemaVersion", migrations.latestVersion())
                .addKeyValue("migrationsApplied", applied.size()).addKeyValue("eventsTrimmed", trimmed).log("catalog opened");
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

    // --- sandboxes ---

    @Override
    public void insert(Sandbox sandbox) {
        db.run("insert sandbox", c -> SandboxTable.insert(c, sandbox, node));
    }

    @Override
    public void update(Sandbox sandbox) {
        db.run("update sandbox", c -> SandboxTable.update(c, sandbox));
    }

    @Override
    public Optional<Sandbox> find(SandboxId id) {
        return db.read("find sandbox", c -> SandboxTable.find(c, id));
    }

    @Override
    public Optional<Sandbox> findByName(TenantId tenant, String name) {
        return db.read("find sandbox by name", c -> SandboxTable.findByName(c, tenant, name));
    }

    @Override
    public Page<Sandbox> list(SandboxQuery query) {
        return db.read("list sandboxes", c -> SandboxTable.list(c, engine, query));
    }

    @Override
    public List<Sandbox> all() {
        return db.read("list all sandboxes", c -> SandboxTable.all(c, node));
    }

    @Override
    public List<Sandbox> children(SandboxId parent) {
        return db.read("list children", c -> SandboxTable.children(c, parent));
    }

    /** Removes the sandbox, its operation and its previews, together. Its checkpoints stay. */
    @Override
    public void delete(SandboxId id) {
        db.runInTransaction("delete sandbox", c -> {
            SandboxTable.delete(c, id);
            OperationTable.end(c, id);
            PreviewTable.deleteOf(c, id);
            NetworkTable.delete(c, id);
            TokenTable.deleteOfSandbox(c, id);
            VolumeTable.deleteMountsOf(c, id);
            BucketTable.deleteOf(c, id);
            DurableImageTable.deleteOf(c, id);
        });
    }

    // --- bucket mounts ---

    @Override
    public void setBuckets(SandboxId sandbox, List<SandboxBucket> buckets) {
        db.runInTransaction("set bucket mounts", c -> BucketTable.set(c, sandbox, buckets));
    }

    @Override
    public List<SandboxBucket> bucketsOf(SandboxId sandbox) {
        return db.read("list bucket mounts", c -> BucketTable.of(c, sandbox));
    }

    // --- volumes ---

    @Override
    public void insertVolume(Volume volume) {
        db.run("insert volume", c -> VolumeTable.insert(c, volume, node));
    }

    @Override
    public Optional<Volume> findVolume(VolumeId id) {
        return db.read("find volume", c -> VolumeTable.find(c, id));
    }

    @Override
    public Optional<Volume> findVolumeByName(TenantId tenant, String name) {
        return db.read("find volume", c -> VolumeTable.findByName(c, tenant, name));
    }

    @Override
    public List<Volume> volumesOf(TenantId tenant) {
        return db.read("list volumes", c -> VolumeTable.ofTenant(c, tenant));
    }

    @Override
    public List<Volume> allVolumes() {
        return db.read("list volumes", c -> VolumeTable.all(c, node));
    }

    @Override
    public void deleteVolume(VolumeId id) {
        db.runInTransaction("delete volume", c -> VolumeTable.delete(c, id));
    }

    @Override
    public void setMounts(SandboxId sandbox, List<VolumeMount> mounts) {
        db.runInTransaction("set mounts", c -> VolumeTable.setMounts(c, sandbox, mounts));
    }

    @Override
    public List<VolumeMount> mountsOf(SandboxId sandbox) {
        return db.read("list mounts", c -> VolumeTable.mountsOf(c, sandbox));
    }

    @Override
    public List<Mounter> mountersOf(VolumeId volume) {
        return db.read("list mounters", c -> VolumeTable.mountersOf(c, volume));
    }

    @Override
    public void insertVolumeSnapshot(VolumeSnapshot snapshot) {
        db.run("insert volume snapshot", c -> VolumeTable.insertSnapshot(c, snapshot));
    }

    @Override
    public Optional<VolumeSnapshot> findVolumeSnapshot(VolumeSnapshotId id) {
        return db.read("find volume snapshot", c -> VolumeTable.findSnapshot(c, id));
    }

    @Override
    public List<VolumeSnapshot> volumeSnapshotsOf(VolumeId volume) {
        return db.read("list volume snapshots", c -> VolumeTable.snapshotsOf(c, volume));
    }

    @Override
    public void deleteVolumeSnapshot(VolumeSnapshotId id) {
        db.run("delete volume snapshot", c -> VolumeTable.deleteSnapshot(c, id));
    }

    @Override
    public void insertVolumeSync(VolumeSync sync) {
        db.run("insert volume sync", c -> VolumeTable.insertSync(c, sync));
    }

    @Override
    public Optional<VolumeSync> findVolumeSync(VolumeSyncId id) {
        return db.read("find volume sync", c -> VolumeTable.findSync(c, id));
    }

    @Override
    public List<VolumeSync> volumeSyncsOf(VolumeId volume) {
        return db.read("list volume syncs", c -> VolumeTable.syncsOf(c, volume));
    }

    @Override
    public void deleteVolumeSync(VolumeSyncId id) {
        db.run("delete volume sync", c -> VolumeTable.deleteSync(c, id));
    }

    // --- networks ---

    @Override
    public void insertNetwork(SandboxNetwork network) {
        db.run("insert network", c -> NetworkTable.insert(c, network, node));
    }

    @Override
    public void updateNetwork(SandboxNetwork network) {
        db.run("update network", c -> NetworkTable.update(c, network));
    }

    @Override
    public Optional<SandboxNetwork> findNetwork(SandboxId id) {
        return db.read("find network", c -> NetworkTable.find(c, id));
    }

    @Override
    public List<SandboxNetwork> allNetworks() {
        return db.read("list networks", c -> NetworkTable.all(c, node));
    }

    @Override
    public void deleteNetwork(SandboxId id) {
        db.run("delete network", c -> NetworkTable.delete(c, id));
    }

    // --- operations ---

    @Override
    public void beginOperation(Operation operation) {
        db.runInTransaction("begin operation", c -> {
            NodeTable.requireOwnSandbox(c, engine, operation.sandbox(), node);
            OperationTable.begin(c, operation, node);
        });
    }

    /**
     * Replaces the sandbox's record with {@code outcome} and removes its operation, in one
     * transaction. {@code sandbox_not_found} if the sandbox has no record; nothing changes then
     * (the operation stays). {@code node_unavailable} if another node took the sandbox meanwhile
     * (this node was cut off from the catalog): its record stays that node's.
     */
    @Override
    public void completeOperation(Sandbox outcome) {
        db.runInTransaction("complete operation", c -> {
            NodeTable.requireOwnSandbox(c, engine, outcome.id(), node);
            // Either order is atomic; ending first means a failed update must roll the end back,
            // which the tests check.
            OperationTable.end(c, outcome.id());
            SandboxTable.update(c, outcome);
        });
    }

    /** Removes the sandbox's operation, if any, this node's only (another node's that took the sandbox stays). Idempotent. */
    @Override
    public void abandonOperation(SandboxId sandbox) {
        db.run("abandon operation", c -> OperationTable.endOf(c, sandbox, node));
    }

    /** Every operation in progress, oldest first. */
    @Override
    public List<Operation> pendingOperations() {
        return db.read("list pending operations", c -> OperationTable.all(c, node));
    }

    // --- checkpoints ---

    /** Records a checkpoint; {@code internal} if its id is already recorded. */
    @Override
    public void insertCheckpoint(Checkpoint checkpoint) {
        db.run("insert checkpoint", c -> CheckpointTable.insert(c, checkpoint, node));
    }

    @Override
    public Optional<Checkpoint> findCheckpoint(CheckpointId id) {
        return db.read("find checkpoint", c -> CheckpointTable.find(c, id));
    }

    /** Oldest first, the id breaking ties; also for a sandbox that is gone. */
    @Override
    public List<Checkpoint> checkpointsOf(SandboxId sandbox) {
        return db.read("list checkpoints of a sandbox", c -> CheckpointTable.ofSandbox(c, sandbox));
    }

    /** Oldest first, the id breaking ties. */
    @Override
    public List<Checkpoint> allCheckpoints() {
        return db.read("list checkpoints", c -> CheckpointTable.all(c, node));
    }

    @Override
    public List<Checkpoint> checkpointsOfTenant(TenantId tenant) {
        return db.read("list checkpoints of a tenant", c -> CheckpointTable.ofTenant(c, tenant));
    }

    @Override
    public void deleteCheckpoint(CheckpointId id) {
        db.run("delete checkpoint", c -> CheckpointTable.delete(c, id));
    }

    @Override
    public void setCheckpointSpares(CheckpointId id, int count) {
        db.run("set checkpoint spares", c -> CheckpointTable.setSpares(c, id, count));
    }

    @Override
    public Map<CheckpointId, Integer> checkpointSpares() {
        return db.read("list checkpoint spares", c -> CheckpointTable.spares(c, node));
    }

    @Override
    public void recordUpload(CheckpointUpload upload) {
        db.run("record checkpoint upload", c -> UploadTable.upsert(c, upload, node));
    }

    @Override
    public Optional<CheckpointUpload> findUpload(CheckpointId id) {
        return db.read("find checkpoint upload", c -> UploadTable.find(c, id));
    }

    @Override
    public void recordDurableImage(SandboxId sandbox, DurableImage image) {
        db.runInTransaction("record durable image", c -> DurableImageTable.record(c, sandbox, image));
    }

    @Override
    public Optional<DurableImage> durableImage(SandboxId sandbox) {
        return db.read("find durable image", c -> DurableImageTable.find(c, sandbox));
    }

    @Override
    public List<CheckpointUpload> allUploads() {
        return db.read("list checkpoint uploads", c -> UploadTable.all(c, node));
    }

    @Override
    public void deleteUpload(CheckpointId id) {
        db.run("delete checkpoint upload", c -> UploadTable.delete(c, id));
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
        return db.inTransaction("append event", c -> events.append(c, event, dataJson));
    }

    /** At most {@code limit} events with an id above {@code afterId}, in id order; {@code limit} 0 gives none. */
    @Override
    public List<Event> eventsAfter(long afterId, Optional<SandboxId> sandbox, Optional<TenantId> tenant, int limit) {
        if (limit < 0) throw new IllegalArgumentException("limit must not be negative, was " + limit);
        if (limit == 0) return List.of();
        return db.read("list events", c -> EventTable.after(c, afterId, sandbox, tenant, limit));
    }

    @Override
    public long lastEventId() {
        return db.read("read the last event id", EventTable::lastId);
    }

    // --- API keys ---

    @Override
    public void insertApiKey(ApiKey key) {
        db.run("insert api key", c -> ApiKeyTable.insert(c, key));
    }

    @Override
    public Optional<ApiKey> findApiKeyByHash(String secretHash) {
        return db.read("find api key", c -> ApiKeyTable.findByHash(c, secretHash));
    }

    @Override
    public List<ApiKey> apiKeysOf(TenantId tenant) {
        return db.read("list api keys", c -> ApiKeyTable.ofTenant(c, tenant));
    }

    @Override
    public void deleteApiKey(String id) {
        db.run("delete api key", c -> ApiKeyTable.delete(c, id));
    }

    @Override
    public boolean hasRootKey() {
        return db.read("check root key", ApiKeyTable::hasRoot);
    }

    // --- tenants ---

    @Override
    public void insertTenant(Tenant tenant) {
        db.run("insert tenant", c -> TenantTable.insert(c, tenant));
    }

    @Override
    public void updateTenant(Tenant tenant) {
        db.run("update tenant", c -> TenantTable.update(c, tenant));
    }

    @Override
    public Optional<Tenant> findTenant(TenantId id) {
        return db.read("find tenant", c -> TenantTable.find(c, id));
    }

    @Override
    public List<Tenant> allTenants() {
        return db.read("list tenants", TenantTable::all);
    }

    /** Deletes the tenant, its keys, tokens and secrets, together, unless it has sandboxes or volumes or is the default. */
    @Override
    public boolean deleteTenantIfEmpty(TenantId id) {
        return db.inTransaction("delete tenant", c -> {
            if (id.equals(TenantId.DEFAULT)) return false; // it holds the root key
            if (SandboxTable.anyOf(c, id) || VolumeTable.anyOf(c, id)) return false;
            ApiKeyTable.deleteOfTenant(c, id);
            TokenTable.deleteOfTenant(c, id);
            SecretTable.deleteOfTenant(c, id);
            TenantTable.delete(c, id);
            return true;
        });
    }

    @Override
    public TenantUsage usage(TenantId tenant) {
        return db.read("tenant usage", c -> TenantTable.usage(c, tenant));
    }

    @Override
    public void hold(QuotaHold hold, QuotaHold.Admission admission) {
        db.runInTransaction("admit a quota hold", c -> {
            engine.serialize(c, SqlEngine.Turn.QUOTA_HOLD);
            QuotaHoldTable.hold(c, node, hold, admission, Instant.now());
        });
    }

    @Override
    public void releaseHold(String id) {
        db.run("release a quota hold", c -> QuotaHoldTable.release(c, id));
    }

    @Override
    public int releaseHoldsOf(String holder) {
        return db.withConnection("release a node's quota holds", c -> QuotaHoldTable.releaseOf(c, holder));
    }

    // --- scoped tokens ---

    @Override
    public void insertToken(ScopedToken token) {
        db.run("insert token", c -> TokenTable.insert(c, token));
    }

    @Override
    public Optional<ScopedToken> findTokenByHash(String secretHash) {
        return db.read("find token", c -> TokenTable.findByHash(c, secretHash));
    }

    @Override
    public Optional<ScopedToken> findToken(String id) {
        return db.read("find token", c -> TokenTable.find(c, id));
    }

    @Override
    public List<ScopedToken> tokensOf(TenantId tenant) {
        return db.read("list tokens", c -> TokenTable.ofTenant(c, tenant));
    }

    @Override
    public void deleteToken(String id) {
        db.run("delete token", c -> TokenTable.delete(c, id));
    }

    @Override
    public void deleteTokensExpiredBefore(Instant now) {
        db.run("delete expired tokens", c -> TokenTable.deleteExpiredBefore(c, now));
    }

    // --- previews ---

    @Override
    public boolean insertPreview(Preview preview) {
        return db.withConnection("insert preview", c -> PreviewTable.insert(c, preview));
    }

    @Override
    public Optional<Preview> findPreview(PreviewId id) {
        return db.read("find preview", c -> PreviewTable.find(c, id));
    }

    /** Oldest first, the id breaking ties. */
    @Override
    public List<Preview> previewsOf(SandboxId sandbox) {
        return db.read("list previews of a sandbox", c -> PreviewTable.ofSandbox(c, sandbox));
    }

    @Override
    public void deletePreview(PreviewId id) {
        db.run("delete preview", c -> PreviewTable.delete(c, id));
    }

    // --- secrets ---

    @Override
    public boolean putSecret(TenantId tenant, SealedSecret secret) {
        return db.inTransaction("put secret", c -> SecretTable.put(c, tenant, secret));
    }

    @Override
    public Optional<SealedSecret> findSecret(TenantId tenant, String name) {
        return db.read("find secret", c -> SecretTable.find(c, tenant, name));
    }

    @Override
    public List<SealedSecret> secretsOf(TenantId tenant) {
        return db.read("list secrets", c -> SecretTable.ofTenant(c, tenant));
    }

    @Override
    public boolean deleteSecret(TenantId tenant, String name) {
        return db.withConnection("delete secret", c -> SecretTable.delete(c, tenant, name));
    }

    // --- nodes ---

    @Override
    public String localNode() {
        return node;
    }

    @Override
    public void putNode(Node record) {
        db.run("register node", c -> NodeTable.put(c, record));
    }

    @Override
    public boolean renewNode(String name, Instant leaseUntil, NodeCapacity capacity) {
        db.keepClaim("keep the node's lock"); // a lease renewed without it could be another service's of the same name
        return db.withConnection("renew node lease", c -> NodeTable.renew(c, name, leaseUntil, capacity));
    }

    @Override
    public boolean setDraining(String name, boolean draining) {
        return db.withConnection("mark a node draining", c -> NodeTable.setDraining(c, name, draining));
    }

    @Override
    public List<Node> nodes() {
        return db.read("list nodes", NodeTable::all);
    }

    @Override
    public Optional<String> nodeOf(SandboxId sandbox) {
        return db.read("find the node of a sandbox", c -> NodeTable.nodeOf(c, "sandboxes", sandbox.value()));
    }

    @Override
    public Optional<String> nodeOfCheckpoint(CheckpointId checkpoint) {
        return db.read("find the node of a checkpoint", c -> NodeTable.nodeOf(c, "checkpoints", checkpoint.value()));
    }

    @Override
    public Optional<String> nodeOfVolume(VolumeId volume) {
        return db.read("find the node of a volume", c -> NodeTable.nodeOf(c, "volumes", volume.value()));
    }

    @Override
    public Map<String, Integer> sandboxCountsByNode() {
        return db.read("count sandboxes by node", NodeTable::sandboxCounts);
    }

    @Override
    public Map<String, TenantUsage> nodeLoads() {
        return db.read("what each node holds", QuotaHoldTable::loads);
    }

    @Override
    public List<SandboxId> sandboxesOfNode(String other) {
        return db.read("list the sandboxes of a node", c -> NodeTable.sandboxesOf(c, other));
    }

    @Override
    public boolean adoptSandbox(SandboxId sandbox, String fromNode, OptionalInt slot, Optional<Sandbox> asHibernated) {
        return db.inTransaction("adopt a sandbox", c -> NodeTable.adopt(c, engine, sandbox, fromNode, node, slot, asHibernated));
    }

    /** Closes the connections (and, on PostgreSQL, gives up the node's lock). Idempotent; later calls fail with {@code internal}. */
    @Override
    public void close() {
        if (db.close()) log.atInfo().addKeyValue("database", database).log("catalog closed");
    }

    @Override
    public String toString() {
        return "SqlCatalog[" + engine + " " + database + "]";
    }
}
