package io.stasis.catalog.sql;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves a single service's SQLite catalog into a fresh PostgreSQL catalog, once: every row of every
 * table, in one PostgreSQL transaction, so the service comes back on PostgreSQL with its sandboxes,
 * checkpoints, tenants, keys, secrets and events.
 *
 * <p><b>Steps, each safe to be killed at.</b> (1) The SQLite file is migrated to the newest schema
 * and closed. (2) It is renamed {@code <file>.moving-to-postgresql} (with its {@code -wal} and
 * {@code -shm}, should any be left). (3) Its rows are copied in one transaction. (4) It is renamed
 * {@code <file>.moved-to-postgresql} and kept as a backup. A start that finds the {@code .moving}
 * file copies again if the PostgreSQL catalog is still fresh (the copy was rolled back), and only
 * renames otherwise (the copy had committed: nothing else writes the catalog before the move is done).
 *
 * <p>A fresh PostgreSQL catalog has no sandboxes, checkpoints, keys, tokens, secrets, volumes or
 * events and only the default tenant. One that is not fresh while a SQLite file waits to be moved is
 * refused with a message that says so: merging two catalogs is not a move.
 */
public final class SqliteToPostgres {
    private static final Logger log = LoggerFactory.getLogger(SqliteToPostgres.class);
    static final String MOVING = ".moving-to-postgresql";
    static final String MOVED = ".moved-to-postgresql";
    /** Every table, parents of nothing first; schema_version is each engine's own. */
    static final List<String> TABLES = List.of("tenants", "sandboxes", "api_keys", "tokens", "secrets", "checkpoints", "operations",
            "events", "sandbox_networks", "previews", "checkpoint_uploads", "durable_images", "volumes", "sandbox_volumes",
            "volume_snapshots", "volume_syncs", "sandbox_buckets");
    private static final List<String> SIDE_FILES = List.of("", "-wal", "-shm");

    private SqliteToPostgres() {
    }

    /**
     * Moves {@code sqliteFile} into {@code postgres} if the file (or an interrupted move of it) is
     * there; returns how many rows each table received, or empty when there was nothing to move.
     */
    public static Optional<Map<String, Integer>> moveIfPresent(Path sqliteFile, SqlCatalog postgres) {
        Path moving = sibling(sqliteFile, MOVING);
        try {
            if (Files.exists(sqliteFile)) {
                if (!postgres.isFresh())
                    throw new StasisException(ErrorCode.INTERNAL, "the data directory holds a SQLite catalog (" + sqliteFile
                            + ") and the PostgreSQL catalog " + postgres.database() + " is not empty: a move goes into a fresh database."
                            + " Start without --catalog to keep using the file, or point --catalog at an empty database",
                            Map.of("file", sqliteFile.toString(), "database", postgres.database()));
                SqlCatalog.openSqlite(sqliteFile, EventRetention.UNBOUNDED).close(); // the newest schema, the WAL checkpointed
                for (String side : SIDE_FILES) {
                    Path from = Path.of(sqliteFile + side);
                    if (Files.exists(from)) Files.move(from, Path.of(moving + side), StandardCopyOption.ATOMIC_MOVE);
                }
            } else if (!Files.exists(moving)) {
                return Optional.empty();
            }
            Map<String, Integer> copied = postgres.isFresh() ? copy(moving, postgres) : Map.of();
            for (String side : SIDE_FILES) {
                Path from = Path.of(moving + side);
                if (Files.exists(from)) Files.move(from, Path.of(sibling(sqliteFile, MOVED) + side), StandardCopyOption.ATOMIC_MOVE,
                        StandardCopyOption.REPLACE_EXISTING);
            }
            log.atInfo().addKeyValue("file", sqliteFile).addKeyValue("database", postgres.database()).addKeyValue("rows", copied)
                    .log(copied.isEmpty() ? "catalog move finished (its copy had committed)" : "catalog moved to PostgreSQL");
            return Optional.of(copied);
        } catch (IOException e) {
            throw new StasisException(ErrorCode.INTERNAL, "cannot move the catalog " + sqliteFile + " to " + postgres.database() + ": " + e,
                    Map.of("file", sqliteFile.toString(), "database", postgres.database()), e);
        }
    }

    private static Map<String, Integer> copy(Path sqliteFile, SqlCatalog postgres) {
        try (var sqlite = SqlCatalog.openSqlite(sqliteFile, EventRetention.UNBOUNDED)) {
            return sqlite.connection().withConnection("read for the move to PostgreSQL",
                    from -> postgres.connection().inTransaction("copy from SQLite", to -> {
                        var counts = copyTables(from, to);
                        NodeTable.claim(to, postgres.localNode(), true); // the file was one node's: it is now this one's
                        return counts;
                    }));
        }
    }

    private static Map<String, Integer> copyTables(Connection from, Connection to) throws SQLException {
        var counts = new LinkedHashMap<String, Integer>();
        try (var st = to.createStatement()) {
            st.executeUpdate("DELETE FROM tenants"); // the default tenant the schema starts with comes from the file
        }
        for (String table : TABLES) counts.put(table, copyTable(from, to, table));
        try (var st = to.createStatement()) {
            st.executeQuery("SELECT setval(pg_get_serial_sequence('events', 'id'), coalesce(max(id), 0) + 1, false) FROM events").close();
        }
        return counts;
    }

    private static int copyTable(Connection from, Connection to, String table) throws SQLException {
        try (var select = from.createStatement(); var rows = select.executeQuery("SELECT * FROM " + table)) {
            var meta = rows.getMetaData();
            var columns = new ArrayList<String>();
            for (int i = 1; i <= meta.getColumnCount(); i++) columns.add(meta.getColumnName(i));
            String sql = "INSERT INTO " + table + " (" + String.join(", ", columns) + ")"
                    + (table.equals("events") ? " OVERRIDING SYSTEM VALUE" : "")
                    + " VALUES (" + String.join(", ", columns.stream().map(c -> "?").toList()) + ")";
            int count = 0;
            try (var insert = to.prepareStatement(sql)) {
                while (rows.next()) {
                    for (int i = 1; i <= columns.size(); i++) insert.setObject(i, rows.getObject(i));
                    insert.addBatch();
                    if (++count % 500 == 0) insert.executeBatch();
                }
                insert.executeBatch();
            }
            return count;
        }
    }

    private static Path sibling(Path file, String suffix) {
        return file.resolveSibling(file.getFileName() + suffix);
    }
}
