package io.stasis.catalog.sqlite;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.stasis.core.auth.ApiKey;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.Page;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxQuery;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.spi.Catalog;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
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
 * returns them, since reconciliation must finish their teardown.
 */
public final class SqliteCatalog implements Catalog {
    private static final Logger log = LoggerFactory.getLogger(SqliteCatalog.class);
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");
    private static final int BUSY_TIMEOUT_MS = 10_000;
    private static final String SANDBOX_COLUMNS =
            "id, name, template, state, state_reason, created_at, cpus, memory_mb, pids, env, metadata";

    private final Path file;
    private final Connection connection;
    private final ReentrantLock lock = new ReentrantLock();
    private boolean closed;

    private SqliteCatalog(Path file, Connection connection) {
        this.file = file;
        this.connection = connection;
    }

    /**
     * Opens (creating if needed) the catalog in {@code dbFile} and migrates its schema.
     * <p>Effects on success: the parent directories exist; the file exists with mode 0600; the
     * schema is current.
     * <p>On failure: an {@code internal} error, e.g. when the file was written by a newer Stasis;
     * no connection is left open.
     */
    public static SqliteCatalog open(Path dbFile) {
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
            log.atInfo().addKeyValue("file", file).addKeyValue("schemaVersion", migrations.latestVersion())
                    .addKeyValue("migrationsApplied", applied.size()).log("catalog opened");
            return new SqliteCatalog(file, connection);
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
            try (var st = c.prepareStatement("INSERT INTO sandboxes (" + SANDBOX_COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
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
        int changed = withConnection("update sandbox", c -> {
            try (var st = c.prepareStatement("""
                    UPDATE sandboxes SET name = ?, template = ?, state = ?, state_reason = ?, created_at = ?,
                        cpus = ?, memory_mb = ?, pids = ?, env = ?, metadata = ?
                    WHERE id = ?""")) {
                int next = bindSandboxFields(st, 1, sandbox);
                st.setString(next, sandbox.id().value());
                return st.executeUpdate();
            } catch (SQLiteException e) {
                throwIfConstraint(e, sandbox);
                throw e;
            }
        });
        // Updating a sandbox nobody recorded is a caller bug; saying so beats silently losing the write.
        if (changed == 0) throw StasisException.sandboxNotFound(sandbox.id().value());
    }

    /** Binds every column after id, starting at {@code index}; returns the next free index. */
    private static int bindSandboxFields(PreparedStatement st, int index, Sandbox s) throws SQLException {
        st.setString(index++, s.name().orElse(null));
        st.setString(index++, s.template());
        st.setString(index++, s.state().wireName());
        st.setString(index++, s.state() instanceof SandboxState.Stopped(String reason) ? reason : null);
        st.setString(index++, CatalogTime.format(s.createdAt()));
        st.setDouble(index++, s.resources().cpus());
        st.setInt(index++, s.resources().memoryMb());
        st.setInt(index++, s.resources().pids());
        st.setString(index++, StringMaps.toJson(s.env()));
        st.setString(index++, StringMaps.toJson(s.metadata()));
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
    public Optional<Sandbox> findByName(String name) {
        return withConnection("find sandbox by name", c -> queryOne(c, "SELECT " + SANDBOX_COLUMNS + " FROM sandboxes WHERE name = ?", name));
    }

    private static Optional<Sandbox> queryOne(Connection c, String sql, String key) throws SQLException {
        try (var st = c.prepareStatement(sql)) {
            st.setString(1, key);
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
                    SandboxState.fromWire(rs.getString("state"), rs.getString("state_reason")),
                    CatalogTime.parse(rs.getString("created_at")),
                    new Resources(rs.getDouble("cpus"), rs.getInt("memory_mb"), rs.getInt("pids")),
                    StringMaps.fromJson(rs.getString("env")),
                    StringMaps.fromJson(rs.getString("metadata")));
        } catch (JsonProcessingException | RuntimeException e) {
            // A row this code cannot read means a damaged file or a schema mismatch, not a bad request.
            throw new StasisException(ErrorCode.INTERNAL, "the catalog's record of sandbox " + id + " is unreadable: " + e.getMessage(),
                    Map.of("sandbox", String.valueOf(id)), e);
        }
    }

    @Override
    public void delete(SandboxId id) {
        withConnection("delete sandbox", c -> {
            try (var st = c.prepareStatement("DELETE FROM sandboxes WHERE id = ?")) {
                st.setString(1, id.value());
                st.executeUpdate();
            }
            return null;
        });
    }

    @Override
    public void insertApiKey(ApiKey key) {
        withConnection("insert api key", c -> {
            try (var st = c.prepareStatement("INSERT INTO api_keys (id, secret_hash, root, created_at) VALUES (?, ?, ?, ?)")) {
                st.setString(1, key.id());
                st.setString(2, key.secretHash());
                st.setInt(3, key.root() ? 1 : 0);
                st.setString(4, CatalogTime.format(key.createdAt()));
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
            try (var st = c.prepareStatement("SELECT id, secret_hash, root, created_at FROM api_keys WHERE secret_hash = ?")) {
                st.setString(1, secretHash);
                try (var rs = st.executeQuery()) {
                    if (!rs.next()) return Optional.empty();
                    return Optional.of(new ApiKey(rs.getString("id"), rs.getString("secret_hash"),
                            rs.getInt("root") == 1, CatalogTime.parse(rs.getString("created_at"))));
                }
            }
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
}
