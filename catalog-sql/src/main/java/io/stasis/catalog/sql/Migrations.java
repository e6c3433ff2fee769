package io.stasis.catalog.sql;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings a catalog database's schema up to date with its engine's versioned SQL scripts in
 * {@code db/migration/<engine>/V<n>__<description>.sql}. The two engines have their own scripts: SQLite's
 * replay the history of every file ever written; PostgreSQL's start at the schema SQLite has at its
 * newest version, and a test holds the two schemas to the same tables and columns.
 *
 * <p>The {@code schema_version} table records each applied version. Each missing migration runs in
 * its own transaction together with its {@code schema_version} row, in version order, so a failed
 * script leaves the database at the previous version. A database whose version is newer than the
 * newest script is refused: this code does not know its schema and must not write to it.
 */
final class Migrations {
    private static final Logger log = LoggerFactory.getLogger(Migrations.class);

    private static final Pattern SCRIPT_NAME = Pattern.compile("V([1-9][0-9]*)__([A-Za-z0-9_]+)\\.sql");

    /** One schema step: its version, a description from the file name, and its SQL. */
    record Migration(int version, String description, String sql) {
    }

    private final SqlEngine engine;
    private final List<Migration> migrations;

    /** Migrations must be numbered 1, 2, 3... without gaps, so "newest applied" says what is applied. */
    Migrations(SqlEngine engine, List<Migration> migrations) {
        this.engine = engine;
        for (int i = 0; i < migrations.size(); i++) {
            if (migrations.get(i).version() != i + 1)
                throw new IllegalArgumentException("migration versions must be 1, 2, 3...: found V"
                        + migrations.get(i).version() + " at position " + (i + 1));
        }
        this.migrations = List.copyOf(migrations);
    }

    /** The migrations shipped in this jar for {@code engine}. */
    static Migrations bundled(SqlEngine engine) {
        var loaded = new ArrayList<Migration>();
        for (String script : engine.migrationScripts()) {
            var name = SCRIPT_NAME.matcher(script);
            if (!name.matches()) throw new IllegalStateException("migration script name must be V<n>__<words>.sql: " + script);
            loaded.add(new Migration(Integer.parseInt(name.group(1)), name.group(2).replace('_', ' '),
                    readResource(engine.migrationDirectory() + script)));
        }
        return new Migrations(engine, loaded);
    }

    private static String readResource(String resource) {
        try (InputStream in = Migrations.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) throw new IllegalStateException("migration script missing from the classpath: " + resource);
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read migration script " + resource, e);
        }
    }

    /** The version a database has once {@link #apply} returns. */
    int latestVersion() {
        return migrations.size();
    }

    /**
     * Applies every migration the database lacks.
     *
     * <p>Prerequisites: {@code connection} is in auto-commit mode. Each step takes the engine's
     * {@link SqlEngine.Turn#MIGRATION migration turn} first (SQLite: the connection opens transactions
     * with {@code BEGIN IMMEDIATE}), so two services migrating one database at once take turns
     * instead of both applying a script.
     * <p>Effects on success: the schema is at {@link #latestVersion()}; the connection is back in
     * auto-commit mode. Returns the versions this call applied (empty if it was up to date).
     * <p>On failure: the migration that failed is rolled back, earlier ones stay applied; a
     * database newer than this code is an {@code internal} error naming both versions.
     */
    List<Integer> apply(Connection connection, String database) throws SQLException {
        var applied = new ArrayList<Integer>();
        while (true) {
            connection.setAutoCommit(false);
            try {
                engine.serialize(connection, SqlEngine.Turn.MIGRATION);
                try (Statement st = connection.createStatement()) {
                    st.executeUpdate("""
                            CREATE TABLE IF NOT EXISTS schema_version (
                                version     INTEGER NOT NULL PRIMARY KEY,
                                description TEXT    NOT NULL,
                                applied_at  TEXT    NOT NULL
                            )""");
                }
                // Read inside the turn: another process may have migrated meanwhile.
                int current = currentVersion(connection);
                if (current > latestVersion()) throw tooNew(database, current);
                if (current == latestVersion()) {
                    connection.commit();
                    return applied;
                }
                var next = migrations.get(current);
                long start = System.nanoTime();
                applyOne(connection, next, database);
                connection.commit();
                applied.add(next.version());
                log.atInfo().addKeyValue("database", database).addKeyValue("version", next.version())
                        .addKeyValue("description", next.description())
                        .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("catalog migration applied");
            } catch (SQLException | RuntimeException e) {
                try {
                    connection.rollback();
                } catch (SQLException rollbackFailure) {
                    e.addSuppressed(rollbackFailure);
                }
                throw e;
            } finally {
                connection.setAutoCommit(true);
            }
        }
    }

    private static void applyOne(Connection connection, Migration migration, String database) throws SQLException {
        try (Statement st = connection.createStatement()) {
            // sqlite-jdbc runs a statement-less executeUpdate through sqlite3_exec, which runs every
            // statement of the script in turn (a prepared statement would stop after the first);
            // PostgreSQL's driver sends a parameterless script as one simple query.
            st.executeUpdate(migration.sql());
        } catch (SQLException e) {
            throw new SQLException("migration V" + migration.version() + " (" + migration.description()
                    + ") failed on " + database + ": " + e.getMessage(), e.getSQLState(), e.getErrorCode(), e);
        }
        try (var insert = connection.prepareStatement(
                "INSERT INTO schema_version (version, description, applied_at) VALUES (?, ?, ?)")) {
            insert.setInt(1, migration.version());
            insert.setString(2, migration.description());
            insert.setString(3, CatalogTime.format(Instant.now()));
            insert.executeUpdate();
        }
    }

    static int currentVersion(Connection connection) throws SQLException {
        try (Statement st = connection.createStatement();
             var rs = st.executeQuery("SELECT coalesce(max(version), 0) FROM schema_version")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    private StasisException tooNew(String database, int found) {
        return new StasisException(ErrorCode.INTERNAL,
                "the catalog " + database + " has schema version " + found + " but this Stasis knows versions up to "
                        + latestVersion() + ": it was written by a newer Stasis; run that version, or restore a backup",
                Map.of("database", database, "schemaVersion", found, "knownVersion", latestVersion()));
    }
}
