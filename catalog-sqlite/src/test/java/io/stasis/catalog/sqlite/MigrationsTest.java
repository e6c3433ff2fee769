package io.stasis.catalog.sqlite;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.catalog.sqlite.Migrations.Migration;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MigrationsTest {
    @TempDir
    Path dir;

    @Test
    void theScriptListMatchesTheMigrationFolder() throws Exception {
        // Run from the module directory by Surefire; catches a script added but not listed.
        try (Stream<Path> files = Files.list(Path.of("src/main/resources", Migrations.RESOURCE_DIR))) {
            assertThat(files.map(p -> p.getFileName().toString()).sorted().toList())
                    .containsExactlyInAnyOrderElementsOf(Migrations.SCRIPTS);
        }
        assertThat(Migrations.bundled().latestVersion()).isEqualTo(Migrations.SCRIPTS.size());
    }

    @Test
    void reopeningAppliesNothingTwice() throws Exception {
        var db = dir.resolve("catalog.db");
        SqliteCatalog.open(db).close();
        SqliteCatalog.open(db).close();
        SqliteCatalog.open(db).close();

        try (var c = connect(db)) {
            assertThat(versions(c)).containsExactly(1);
            assertThat(Migrations.bundled().apply(c, "test")).isEmpty();
        }
    }

    @Test
    void aDatabaseFromANewerStasisIsRefused() throws Exception {
        var db = dir.resolve("catalog.db");
        SqliteCatalog.open(db).close();
        try (var c = connect(db); var st = c.createStatement()) {
            st.executeUpdate("INSERT INTO schema_version VALUES (99, 'from the future', '2030-01-01T00:00:00Z')");
        }

        assertThatThrownBy(() -> SqliteCatalog.open(db))
                .isInstanceOfSatisfying(StasisException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL);
                    assertThat(e.details()).containsEntry("schemaVersion", 99).containsEntry("knownVersion", 1);
                })
                .hasMessageContaining("schema version 99")
                .hasMessageContaining("newer Stasis");
    }

    @Test
    void appliesMissingMigrationsInOrderEachOnce() throws Exception {
        var v1 = new Migration(1, "first", "CREATE TABLE a (x INTEGER); INSERT INTO a VALUES (1);");
        var v2 = new Migration(2, "second", "CREATE TABLE b (y INTEGER);\nINSERT INTO b SELECT x + 1 FROM a;");
        try (var c = connect(dir.resolve("m.db"))) {
            assertThat(new Migrations(List.of(v1)).apply(c, "m.db")).containsExactly(1);
            assertThat(new Migrations(List.of(v1, v2)).apply(c, "m.db")).containsExactly(2);
            assertThat(new Migrations(List.of(v1, v2)).apply(c, "m.db")).isEmpty();

            assertThat(versions(c)).containsExactly(1, 2);
            assertThat(queryInt(c, "SELECT y FROM b")).isEqualTo(2);
            assertThat(c.getAutoCommit()).isTrue();
        }
    }

    @Test
    void aFailingMigrationIsRolledBackWhole() throws Exception {
        var v1 = new Migration(1, "first", "CREATE TABLE a (x INTEGER);");
        var broken = new Migration(2, "broken", "CREATE TABLE half (z INTEGER); INSERT INTO nowhere VALUES (1);");
        try (var c = connect(dir.resolve("m.db"))) {
            assertThatThrownBy(() -> new Migrations(List.of(v1, broken)).apply(c, "m.db"))
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("migration V2 (broken) failed")
                    .hasMessageContaining("nowhere");

            assertThat(versions(c)).containsExactly(1);
            assertThat(queryInt(c, "SELECT count(*) FROM sqlite_schema WHERE name = 'half'")).isZero();
            assertThat(c.getAutoCommit()).isTrue();
        }
    }

    @Test
    void versionsMustBeConsecutiveFromOne() {
        assertThatThrownBy(() -> new Migrations(List.of(new Migration(2, "skips one", ""))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("V2");
    }

    private static Connection connect(Path db) throws SQLException {
        return DriverManager.getConnection("jdbc:sqlite:" + db);
    }

    private static List<Integer> versions(Connection c) throws SQLException {
        var out = new ArrayList<Integer>();
        try (var st = c.createStatement(); var rs = st.executeQuery("SELECT version FROM schema_version ORDER BY version")) {
            while (rs.next()) out.add(rs.getInt(1));
        }
        return out;
    }

    private static int queryInt(Connection c, String sql) throws SQLException {
        try (var st = c.createStatement(); var rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getInt(1);
        }
    }
}
