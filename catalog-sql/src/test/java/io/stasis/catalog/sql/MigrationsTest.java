package io.stasis.catalog.sql;

import io.stasis.core.sandbox.RuntimeKind;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.catalog.sql.Migrations.Migration;
import io.stasis.core.auth.ApiKey;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.events.Event;
import io.stasis.core.network.EgressPolicy;
import io.stasis.core.network.NetworkPolicy;
import io.stasis.core.network.SandboxNetwork;
import io.stasis.core.policy.LifecyclePolicy;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxQuery;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.secret.SealedSecret;
import io.stasis.core.tenant.TenantId;
import io.stasis.core.tenant.TenantQuota;
import io.stasis.core.tenant.TenantUsage;
import io.stasis.testkit.CatalogFixtures;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MigrationsTest {
    /** The policy V2 gave rows written before it (the defaults then: no standby, hibernate after 10 min). */
    private static final LifecyclePolicy V2_POLICY = new LifecyclePolicy(Optional.of(Duration.ofSeconds(15)), Optional.empty(),
            Optional.of(Duration.ofMinutes(10)), Optional.empty(), Optional.of(Duration.ofDays(30)), Optional.empty(), true, Optional.empty());

    @TempDir
    Path dir;

    @Test
    void theScriptListMatchesTheMigrationFolder() throws Exception {
        // Run from the module directory by Surefire; catches a script added but not listed.
        try (Stream<Path> files = Files.list(Path.of("src/main/resources", SqlEngine.SQLITE.migrationDirectory()))) {
            assertThat(files.map(p -> p.getFileName().toString()).sorted().toList())
                    .containsExactlyInAnyOrderElementsOf(SqlEngine.SQLITE.migrationScripts());
        }
        assertThat(Migrations.bundled(SqlEngine.SQLITE).latestVersion()).isEqualTo(SqlEngine.SQLITE.migrationScripts().size());
    }

    @Test
    void reopeningAppliesNothingTwice() throws Exception {
        var db = dir.resolve("catalog.db");
        SqlCatalog.openSqlite(db).close();
        SqlCatalog.openSqlite(db).close();
        SqlCatalog.openSqlite(db).close();

        try (var c = connect(db)) {
            assertThat(versions(c)).containsExactlyElementsOf(everyVersion());
            assertThat(Migrations.bundled(SqlEngine.SQLITE).apply(c, "test")).isEmpty();
        }
    }

    @Test
    void aDatabaseFromANewerStasisIsRefused() throws Exception {
        var db = dir.resolve("catalog.db");
        SqlCatalog.openSqlite(db).close();
        try (var c = connect(db); var st = c.createStatement()) {
            st.executeUpdate("INSERT INTO schema_version VALUES (99, 'from the future', '2030-01-01T00:00:00Z')");
        }

        assertThatThrownBy(() -> SqlCatalog.openSqlite(db))
                .isInstanceOfSatisfying(StasisException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL);
                    assertThat(e.details()).containsEntry("schemaVersion", 99).containsEntry("knownVersion", SqlEngine.SQLITE.migrationScripts().size());
                })
                .hasMessageContaining("schema version 99")
                .hasMessageContaining("newer Stasis");
    }

    /**
     * A file as a V1 Stasis left it (made here with the V1 script alone, rows written the way the
     * V1 catalog wrote them) opens under V2 with every record intact and the V2 defaults: the
     * default lifecycle as the code writes it, no lineage, no checkpoints, operations or events.
     */
    @Test
    void aV1DatabaseMigratesToV2WithItsDataIntact() throws Exception {
        var db = dir.resolve("v1.db");
        var runningId = SandboxId.random();
        var stoppedId = SandboxId.random();
        var reasonlessId = SandboxId.random();
        var deletedId = SandboxId.random();
        try (var c = connect(db)) {
            var v1 = new Migration(1, "init", resource("V1__init.sql"));
            assertThat(new Migrations(SqlEngine.SQLITE, List.of(v1)).apply(c, "v1.db")).containsExactly(1);
            try (var st = c.prepareStatement("""
                    INSERT INTO sandboxes (id, name, template, state, state_reason, created_at, cpus, memory_mb, pids, env, metadata)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""")) {
                insertV1(st, runningId, "web", "base", "running", null, "2026-01-02T03:04:05.987654321Z", 2.5, 2048, 1000,
                        "{\"PATH\":\"/usr/bin\",\"UNICODE\":\"héllo ✓\"}", "{\"owner\":\"alice\",\"team.name/x\":\"infra\"}");
                insertV1(st, stoppedId, null, "tiny", "stopped", "processes_lost", "2026-01-02T03:04:06.000000000Z", 1.0, 1024, 512, "{}", "{}");
                insertV1(st, reasonlessId, null, "tiny", "stopped", null, "2026-01-02T03:04:07.000000000Z", 1.0, 1024, 512, "{}", "{\"owner\":\"alice\"}");
                insertV1(st, deletedId, "gone", "tiny", "deleted", null, "2026-01-02T03:04:08.000000000Z", 0.1, 16, 16, "{}", "{}");
            }
            try (var st = c.createStatement()) {
                st.executeUpdate("INSERT INTO api_keys VALUES ('key_0123456789abcdef', '" + "ab".repeat(32) + "', 1, '2026-01-01T00:00:00.000000000Z')");
            }
        }

        try (var catalog = SqlCatalog.openSqlite(db)) {
            var running = new Sandbox(runningId, Optional.of("web"), "base", SandboxState.RUNNING,
                    Instant.parse("2026-01-02T03:04:05.987654321Z"), new Resources(2.5, 2048, 1000),
                    Map.of("PATH", "/usr/bin", "UNICODE", "héllo ✓"), Map.of("owner", "alice", "team.name/x", "infra"),
                    Optional.empty(), Optional.empty(), V2_POLICY, TenantId.DEFAULT, RuntimeKind.RUNC);
            var stopped = v2Default(stoppedId, Optional.empty(), new SandboxState.Stopped("processes_lost"), "2026-01-02T03:04:06Z", Map.of());
            var reasonless = v2Default(reasonlessId, Optional.empty(), new SandboxState.Stopped(null), "2026-01-02T03:04:07Z", Map.of("owner", "alice"));
            var deleted = new Sandbox(deletedId, Optional.of("gone"), "tiny", SandboxState.DELETED, Instant.parse("2026-01-02T03:04:08Z"),
                    new Resources(0.1, 16, 16), Map.of(), Map.of(), Optional.empty(), Optional.empty(), V2_POLICY, TenantId.DEFAULT, RuntimeKind.RUNC);

            assertThat(catalog.all()).containsExactly(running, stopped, reasonless, deleted);
            assertThat(catalog.findByName(TenantId.DEFAULT, "web")).contains(running);
            assertThat(catalog.list(new SandboxQuery(Optional.empty(), Map.of("owner", "alice"), Optional.empty(), 10, Optional.empty())).items())
                    .containsExactly(running, reasonless);
            assertThat(catalog.children(runningId)).isEmpty();
            assertThat(catalog.allCheckpoints()).isEmpty();
            assertThat(catalog.pendingOperations()).isEmpty();
            assertThat(catalog.eventsAfter(0, Optional.empty(), Optional.empty(), 10)).isEmpty();
            assertThat(catalog.hasRootKey()).isTrue();
            assertThatThrownBy(() -> catalog.insert(CatalogFixtures.named("web")))
                    .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NAME_TAKEN));
            // The migrated rows can take on the new states.
            var hibernated = stopped.withState(new SandboxState.Hibernated(CheckpointId.random(), 10, Instant.parse("2026-02-01T00:00:00Z")));
            catalog.update(hibernated);
            assertThat(catalog.find(stoppedId)).contains(hibernated);
        }

        try (var c = connect(db)) {
            assertThat(versions(c)).containsExactlyElementsOf(everyVersion());
            // The literal in the V2 script is exactly what the code writes for the default policy.
            try (var st = c.prepareStatement("SELECT lifecycle FROM sandboxes WHERE id = ?")) {
                st.setString(1, runningId.value());
                try (var rs = st.executeQuery()) {
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getString(1)).isEqualTo("{\"pauseAfterIdle\":\"PT15S\",\"hibernateAfterIdle\":\"PT10M\",\"stopAfterIdle\":null,\"deleteAfterIdle\":\"PT720H\",\"maxAge\":null,\"autoResume\":true}");
                }
            }
            assertThat(queryInt(c, "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name IN "
                    + "('sandboxes_by_creation', 'sandboxes_by_parent', 'checkpoints_by_sandbox', 'events_by_sandbox')")).isEqualTo(4);
            assertThat(queryInt(c, "SELECT count(*) FROM sqlite_schema WHERE name = 'sandboxes_v2'")).isZero();
            try (var st = c.createStatement(); var rs = st.executeQuery("PRAGMA integrity_check")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).isEqualTo("ok");
            }
        }
    }

    /**
     * A file as a V5 Stasis left it (the first five scripts, rows written the way the V5 catalog
     * wrote them) opens under V6 with every sandbox, API key, secret and sandbox event assigned to
     * the default tenant, whose row exists; events of no sandbox stay of no tenant.
     */
    @Test
    void aV5DatabaseMigratesToV6WithEverythingInTheDefaultTenant() throws Exception {
        var db = dir.resolve("v5.db");
        var webId = SandboxId.random();
        var hibernatedId = SandboxId.random();
        var image = CheckpointId.random();
        var parentCheckpoint = CheckpointId.random();
        var lifecycle = "{\"pauseAfterIdle\":\"PT1M\",\"hibernateAfterIdle\":null,\"stopAfterIdle\":null,"
                + "\"deleteAfterIdle\":null,\"maxAge\":\"PT48H\",\"autoResume\":false}";
        byte[] sealed = {1, 2, 3, (byte) 0xff};
        try (var c = connect(db)) {
            var firstFive = new ArrayList<Migration>();
            for (int v = 1; v <= 5; v++) {
                String script = SqlEngine.SQLITE.migrationScripts().get(v - 1);
                firstFive.add(new Migration(v, script, resource(script)));
            }
            assertThat(new Migrations(SqlEngine.SQLITE, firstFive).apply(c, "v5.db")).containsExactly(1, 2, 3, 4, 5);
            try (var st = c.createStatement()) {
                st.executeUpdate("INSERT INTO sandboxes (id, name, template, state, state_reason, hibernated_checkpoint_id, hibernated_image_bytes,"
                        + " hibernated_at, created_at, cpus, memory_mb, pids, env, metadata, parent_id, checkpoint_id, lifecycle) VALUES"
                        + " ('" + webId + "', 'web', 'base', 'running', NULL, NULL, NULL, NULL, '2026-01-02T03:04:05.000000001Z',"
                        + " 2.0, 2048, 1000, '{\"A\":\"1\"}', '{\"owner\":\"alice\"}', NULL, NULL, '"
                        + LifecycleJson.toJson(LifecyclePolicy.DEFAULT) + "'),"
                        + " ('" + hibernatedId + "', NULL, 'tiny', 'hibernated', NULL, '" + image + "', 4096, '2026-01-03T00:00:00.000000000Z',"
                        + " '2026-01-02T03:04:06.000000000Z', 1.0, 512, 512, '{}', '{}', '" + webId + "', '" + parentCheckpoint + "', '"
                        + lifecycle + "')");
                st.executeUpdate("INSERT INTO api_keys (id, secret_hash, root, created_at) VALUES"
                        + " ('key_0123456789abcdef', '" + "ab".repeat(32) + "', 1, '2026-01-01T00:00:00.000000000Z'),"
                        + " ('key_fedcba9876543210', '" + "cd".repeat(32) + "', 0, '2026-01-01T00:00:01.000000000Z')");
                st.executeUpdate("INSERT INTO events (at, type, sandbox_id, data) VALUES"
                        + " ('2026-01-02T03:04:05.000000001Z', 'lifecycle', '" + webId + "', '{\"to\":\"running\"}'),"
                        + " ('2026-01-02T03:04:07.000000000Z', 'error', NULL, '{\"message\":\"host\"}')");
                st.executeUpdate("INSERT INTO sandbox_networks (sandbox_id, slot, policy) VALUES ('" + webId + "', 7, '"
                        + NetworkJson.toJson(new NetworkPolicy(EgressPolicy.ALLOW_ALL)) + "')");
            }
            try (var st = c.prepareStatement("INSERT INTO secrets (name, created_at, sealed) VALUES (?, ?, ?)")) {
                st.setString(1, "TOKEN");
                st.setString(2, "2026-01-01T00:00:02.000000000Z");
                st.setBytes(3, sealed);
                st.executeUpdate();
            }
        }

        try (var catalog = SqlCatalog.openSqlite(db)) {
            var web = new Sandbox(webId, Optional.of("web"), "base", SandboxState.RUNNING, Instant.parse("2026-01-02T03:04:05.000000001Z"),
                    new Resources(2.0, 2048, 1000), Map.of("A", "1"), Map.of("owner", "alice"), Optional.empty(), Optional.empty(),
                    LifecyclePolicy.DEFAULT, TenantId.DEFAULT, RuntimeKind.RUNC);
            var hibernated = new Sandbox(hibernatedId, Optional.empty(), "tiny",
                    new SandboxState.Hibernated(image, 4096, Instant.parse("2026-01-03T00:00:00Z")), Instant.parse("2026-01-02T03:04:06Z"),
                    new Resources(1.0, 512, 512), Map.of(), Map.of(), Optional.of(webId), Optional.of(parentCheckpoint),
                    LifecycleJson.fromJson(lifecycle), TenantId.DEFAULT, RuntimeKind.RUNC);
            var other = TenantId.random();

            assertThat(catalog.allTenants()).singleElement().satisfies(t -> {
                assertThat(t.id()).isEqualTo(TenantId.DEFAULT);
                assertThat(t.name()).isEqualTo("default");
                assertThat(t.quota()).isEqualTo(TenantQuota.UNLIMITED);
            });
            assertThat(catalog.findTenant(TenantId.DEFAULT)).isPresent();

            assertThat(catalog.all()).containsExactly(web, hibernated);
            assertThat(catalog.findByName(TenantId.DEFAULT, "web")).contains(web);
            assertThat(catalog.findByName(other, "web")).isEmpty();
            assertThat(catalog.list(tenantQuery(TenantId.DEFAULT)).items()).containsExactly(web, hibernated);
            assertThat(catalog.list(tenantQuery(other)).items()).isEmpty();
            assertThat(catalog.children(webId)).containsExactly(hibernated);
            // V7 gives the rows of before disk limits the default limit, which disk usage adds up.
            assertThat(catalog.usage(TenantId.DEFAULT)).isEqualTo(new TenantUsage(1, 2048, 2L * Resources.DEFAULT_DISK_MB));
            assertThat(catalog.findNetwork(webId)).contains(new SandboxNetwork(webId, 7, new NetworkPolicy(EgressPolicy.ALLOW_ALL)));

            var root = new ApiKey("key_0123456789abcdef", TenantId.DEFAULT, "ab".repeat(32), true, Instant.parse("2026-01-01T00:00:00Z"));
            var plain = new ApiKey("key_fedcba9876543210", TenantId.DEFAULT, "cd".repeat(32), false, Instant.parse("2026-01-01T00:00:01Z"));
            assertThat(catalog.apiKeysOf(TenantId.DEFAULT)).containsExactly(root, plain);
            assertThat(catalog.findApiKeyByHash("cd".repeat(32))).contains(plain);
            assertThat(catalog.hasRootKey()).isTrue();

            assertThat(catalog.secretsOf(TenantId.DEFAULT))
                    .containsExactly(new SealedSecret("TOKEN", Instant.parse("2026-01-01T00:00:02Z"), sealed));
            assertThat(catalog.secretsOf(other)).isEmpty();

            var events = catalog.eventsAfter(0, Optional.empty(), Optional.empty(), 10);
            assertThat(events).extracting(Event::type, Event::tenant).containsExactly(
                    Tuple.tuple("lifecycle", Optional.of(TenantId.DEFAULT)),
                    Tuple.tuple("error", Optional.empty()));
            assertThat(catalog.eventsAfter(0, Optional.empty(), Optional.of(TenantId.DEFAULT), 10)).isEqualTo(events);
            assertThat(catalog.eventsAfter(0, Optional.empty(), Optional.of(other), 10)).containsExactly(events.get(1));

            // Names are unique per tenant now: taken in the default tenant, free in another.
            assertThatThrownBy(() -> catalog.insert(CatalogFixtures.named("web")))
                    .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NAME_TAKEN));
            catalog.insert(CatalogFixtures.inTenant(CatalogFixtures.named("web"), other));
        }

        try (var c = connect(db)) {
            assertThat(versions(c)).containsExactlyElementsOf(everyVersion());
            assertThat(queryInt(c, "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name IN ('sandboxes_by_creation',"
                    + " 'sandboxes_by_tenant', 'sandboxes_by_parent', 'api_keys_by_tenant', 'events_by_tenant', 'tokens_by_tenant',"
                    + " 'tokens_by_scope')")).isEqualTo(7);
            assertThat(queryInt(c, "SELECT count(*) FROM sqlite_schema WHERE name LIKE '%\\_v6' ESCAPE '\\'")).isZero();
            assertThat(queryInt(c, "SELECT count(*) FROM sandboxes WHERE tenant_id = 'ten_default'")).isEqualTo(2);
            try (var st = c.createStatement(); var rs = st.executeQuery("PRAGMA integrity_check")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).isEqualTo("ok");
            }
        }
    }

    private static SandboxQuery tenantQuery(TenantId tenant) {
        return new SandboxQuery(Optional.empty(), Map.of(), Optional.empty(), 100, Optional.of(tenant));
    }

    private static void insertV1(PreparedStatement st, SandboxId id, String name, String template, String state, String reason,
                                 String createdAt, double cpus, int memoryMb, int pids, String env, String metadata) throws SQLException {
        st.setString(1, id.value());
        st.setString(2, name);
        st.setString(3, template);
        st.setString(4, state);
        st.setString(5, reason);
        st.setString(6, createdAt);
        st.setDouble(7, cpus);
        st.setInt(8, memoryMb);
        st.setInt(9, pids);
        st.setString(10, env);
        st.setString(11, metadata);
        st.executeUpdate();
    }

    private static Sandbox v2Default(SandboxId id, Optional<String> name, SandboxState state, String createdAt, Map<String, String> metadata) {
        return new Sandbox(id, name, "tiny", state, Instant.parse(createdAt), Resources.DEFAULT, Map.of(), metadata,
                Optional.empty(), Optional.empty(), V2_POLICY, TenantId.DEFAULT, RuntimeKind.RUNC);
    }

    private static String resource(String script) throws IOException {
        try (var in = MigrationsTest.class.getClassLoader().getResourceAsStream(SqlEngine.SQLITE.migrationDirectory() + script)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void sandboxesRecordedBeforeDiskLimitsGetTheDefaultDisk() throws Exception {
        var db = dir.resolve("v5.db");
        var id = SandboxId.random();
        try (var c = connect(db)) {
            var upToV5 = new ArrayList<Migration>();
            for (String script : SqlEngine.SQLITE.migrationScripts().subList(0, 5)) {
                int version = Integer.parseInt(script.substring(1, script.indexOf("__")));
                upToV5.add(new Migration(version, script, resource(script)));
            }
            new Migrations(SqlEngine.SQLITE, upToV5).apply(c, "v5.db");
            try (var st = c.prepareStatement("""
                    INSERT INTO sandboxes (id, name, template, state, state_reason, created_at, cpus, memory_mb, pids, env, metadata, lifecycle)
                    VALUES (?, NULL, 'tiny', 'stopped', 'api', '2026-01-02T03:04:05.000000000Z', 1.0, 1024, 512, '{}', '{}', ?)""")) {
                st.setString(1, id.value());
                st.setString(2, LifecycleJson.toJson(LifecyclePolicy.DEFAULT));
                st.executeUpdate();
            }
        }
        try (var catalog = SqlCatalog.openSqlite(db)) {
            var migrated = catalog.find(id).orElseThrow();
            assertThat(migrated.resources().diskMb()).isEqualTo(Resources.DEFAULT_DISK_MB);
            catalog.update(new Sandbox(id, migrated.name(), migrated.template(), migrated.state(), migrated.createdAt(),
                    migrated.resources().withDiskMb(512), migrated.env(), migrated.metadata(), migrated.parentId(),
                    migrated.checkpointId(), migrated.lifecycle(), migrated.tenant(), RuntimeKind.RUNC));
            assertThat(catalog.find(id).orElseThrow().resources().diskMb()).isEqualTo(512);
        }
    }

    @Test
    void appliesMissingMigrationsInOrderEachOnce() throws Exception {
        var v1 = new Migration(1, "first", "CREATE TABLE a (x INTEGER); INSERT INTO a VALUES (1);");
        var v2 = new Migration(2, "second", "CREATE TABLE b (y INTEGER);\nINSERT INTO b SELECT x + 1 FROM a;");
        try (var c = connect(dir.resolve("m.db"))) {
            assertThat(new Migrations(SqlEngine.SQLITE, List.of(v1)).apply(c, "m.db")).containsExactly(1);
            assertThat(new Migrations(SqlEngine.SQLITE, List.of(v1, v2)).apply(c, "m.db")).containsExactly(2);
            assertThat(new Migrations(SqlEngine.SQLITE, List.of(v1, v2)).apply(c, "m.db")).isEmpty();

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
            assertThatThrownBy(() -> new Migrations(SqlEngine.SQLITE, List.of(v1, broken)).apply(c, "m.db"))
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
        assertThatThrownBy(() -> new Migrations(SqlEngine.SQLITE, List.of(new Migration(2, "skips one", ""))))
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

    /** 1, 2, ... up to the newest script: what a database has once migrated. */
    private static List<Integer> everyVersion() {
        return IntStream.rangeClosed(1, SqlEngine.SQLITE.migrationScripts().size()).boxed().toList();
    }
}
