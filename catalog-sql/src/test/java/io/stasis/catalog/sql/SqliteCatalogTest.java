package io.stasis.catalog.sql;

import static io.stasis.testkit.CatalogFixtures.T0;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.auth.ApiKey;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.events.Event;
import io.stasis.core.journal.Operation;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxQuery;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.tenant.TenantId;
import io.stasis.testkit.CatalogFixtures;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What only the SQLite catalog has: its file (owner-only, reopened with everything in it), the
 * schema's own checks, its cursor format, event ids that survive reopens, and event retention.
 * Everything every catalog must do is in testkit's suites, run by {@link SqliteCatalogContractTest}.
 */
class SqliteCatalogTest {
    @TempDir
    Path dir;
    Path dbFile;
    SqlCatalog catalog;

    @BeforeEach
    void open() {
        dbFile = dir.resolve("state/catalog.db");
        catalog = SqlCatalog.openSqlite(dbFile);
    }

    @AfterEach
    void close() {
        catalog.close();
    }

    @Test
    void theFileAndItsSideFilesAreOwnerOnly() throws Exception {
        catalog.insert(CatalogFixtures.running(T0)); // makes SQLite create the -wal and -shm files
        var ownerOnly = PosixFilePermissions.fromString("rw-------");

        assertThat(Files.getPosixFilePermissions(dbFile)).isEqualTo(ownerOnly);
        for (String suffix : List.of("-wal", "-shm")) {
            var side = dbFile.resolveSibling(dbFile.getFileName() + suffix);
            assertThat(side).exists();
            assertThat(Files.getPosixFilePermissions(side)).as(side.toString()).isEqualTo(ownerOnly);
        }
    }

    @Test
    void readsGoOnWhileAWriteHoldsTheConnectionAndSeeWhatWasCommittedBefore() throws Exception {
        var sandbox = CatalogFixtures.running(T0);
        catalog.insert(sandbox);
        var writing = new CountDownLatch(1);
        var release = new CountDownLatch(1);
        var writer = Thread.ofVirtual().start(() -> catalog.connection().run("hold the writer", c -> {
            writing.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        writing.await();

        var reads = new ArrayList<Thread>();
        var found = Collections.synchronizedList(new ArrayList<Optional<?>>());
        for (int i = 0; i < 2 * CatalogConnection.SqliteConnections.READERS; i++)
            reads.add(Thread.ofVirtual().start(() -> found.add(catalog.find(sandbox.id()))));
        for (var read : reads) assertThat(read.join(Duration.ofSeconds(10))).as("a read while the writer is held").isTrue();
        assertThat(found).hasSize(2 * CatalogConnection.SqliteConnections.READERS).allMatch(Optional::isPresent);

        release.countDown();
        writer.join();
        catalog.update(sandbox.withState(SandboxState.PAUSED));
        assertThat(catalog.find(sandbox.id()).orElseThrow().state()).isInstanceOf(SandboxState.Paused.class);
    }

    @Test
    void openTightensAnExistingFileToOwnerOnly() throws Exception {
        catalog.close();
        Files.setPosixFilePermissions(dbFile, PosixFilePermissions.fromString("rw-r--r--"));

        catalog = SqlCatalog.openSqlite(dbFile);

        assertThat(Files.getPosixFilePermissions(dbFile)).isEqualTo(PosixFilePermissions.fromString("rw-------"));
    }

    @Test
    void garbageCursorsAreInvalidRequests() {
        catalog.insert(CatalogFixtures.running(T0));
        var b64 = Base64.getUrlEncoder().withoutPadding();
        for (String garbage : List.of("", "!!!not base64!!!", "abc", b64.encodeToString("v1|x|y".getBytes(StandardCharsets.UTF_8)),
                b64.encodeToString("v2|2026-01-01T00:00:00.000000000Z|sbx_0123456789abcdef".getBytes(StandardCharsets.UTF_8)),
                b64.encodeToString("v1|2026-13-01T00:00:00.000000000Z|sbx_0123456789abcdef".getBytes(StandardCharsets.UTF_8)),
                b64.encodeToString("v1|2026-01-01T00:00:00.000000000Z|sbx_NOPE".getBytes(StandardCharsets.UTF_8)),
                b64.encodeToString("v1|+10000-01-01T00:00:00.000000000Z|sbx_0123456789abcdef".getBytes(StandardCharsets.UTF_8)),
                b64.encodeToString("v1|2026-01-01T00:00:00Z|sbx_0123456789abcdef".getBytes(StandardCharsets.UTF_8)),
                b64.encodeToString("v1|2026-01-01T00:00:00.000000000Z|sbx_0123456789abcdef|extra".getBytes(StandardCharsets.UTF_8)))) {
            assertThatThrownBy(() -> catalog.list(new SandboxQuery(Optional.empty(), Map.of(), Optional.of(garbage), 10, Optional.empty())))
                    .as("cursor '%s'", garbage)
                    .isInstanceOfSatisfying(StasisException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.INVALID_REQUEST);
                        assertThat(e.details()).containsEntry("field", "cursor");
                    });
        }
    }

    @Test
    void reopeningTheFileKeepsEverything() {
        var s = CatalogFixtures.sandbox(Optional.of("keep"), "base", new SandboxState.Stopped("host_reboot"),
                T0, new Resources(4, 4096, 2048), Map.of("K", "v"), Map.of("m", "n"));
        var key = new ApiKey("key_0123456789abcdef", TenantId.DEFAULT, "ab".repeat(32), true, T0);
        catalog.insert(s);
        catalog.insertApiKey(key);
        catalog.close();

        catalog = SqlCatalog.openSqlite(dbFile);

        assertThat(catalog.find(s.id())).contains(s);
        assertThat(catalog.findByName(TenantId.DEFAULT, "keep")).contains(s);
        assertThat(catalog.findApiKeyByHash(key.secretHash())).contains(key);
        assertThat(catalog.hasRootKey()).isTrue();
    }

    @Test
    void updateMovesThroughEveryStateAndLeavesNoStaleStateColumns() throws Exception {
        var s = CatalogFixtures.running(T0);
        catalog.insert(s);
        var states = List.<SandboxState>of(SandboxState.PAUSED,
                new SandboxState.Hibernated(CheckpointId.random(), 42, T0.plusSeconds(1)),
                new SandboxState.Stopped("idle"), SandboxState.RUNNING,
                new SandboxState.Hibernated(CheckpointId.random(), 7, T0.plusSeconds(2)), SandboxState.DELETED);

        for (var state : states) {
            catalog.update(s.withState(state));
            assertThat(catalog.find(s.id())).contains(s.withState(state));
        }
        // Deleted after hibernated: the hibernation columns must be NULL again, not left behind.
        catalog.close();
        try (var c = DriverManager.getConnection("jdbc:sqlite:" + dbFile);
             var st = c.createStatement();
             var rs = st.executeQuery("SELECT state, state_reason, hibernated_checkpoint_id, hibernated_image_bytes, hibernated_at FROM sandboxes")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(1)).isEqualTo("deleted");
            for (int column = 2; column <= 5; column++) assertThat(rs.getObject(column)).as("column %d", column).isNull();
        }
        catalog = SqlCatalog.openSqlite(dbFile);
    }

    @Test
    void theSchemaRefusesStateColumnsThatContradictTheState() throws Exception {
        var s = CatalogFixtures.running(T0);
        catalog.insert(s);
        catalog.close();
        try (var c = DriverManager.getConnection("jdbc:sqlite:" + dbFile); var st = c.createStatement()) {
            for (String bad : List.of(
                    "UPDATE sandboxes SET state = 'hibernated'",                               // no image data
                    "UPDATE sandboxes SET hibernated_checkpoint_id = 'ckpt_0123456789abcdef'", // data while running
                    "UPDATE sandboxes SET state_reason = 'idle'",                               // a reason while running
                    "UPDATE sandboxes SET lifecycle = 'not json'")) {
                assertThatThrownBy(() -> st.executeUpdate(bad)).as(bad).hasMessageContaining("constraint failed");
            }
        }
        catalog = SqlCatalog.openSqlite(dbFile);
        assertThat(catalog.find(s.id())).contains(s);
    }

    @Test
    void reopeningKeepsLiveStateOperationsCheckpointsAndEvents() {
        var hibernated = CatalogFixtures.forkOf(SandboxId.random(), CheckpointId.random(), T0)
                .withState(new SandboxState.Hibernated(CheckpointId.random(), 123, T0.plusSeconds(1)));
        var op = new Operation(hibernated.id(), Operation.Kind.RESTORE, Optional.of(CheckpointId.random()), T0.plusSeconds(2));
        var checkpoint = CatalogFixtures.checkpoint(hibernated.id(), T0);
        catalog.insert(hibernated);
        catalog.beginOperation(op);
        catalog.insertCheckpoint(checkpoint);
        var event = catalog.appendEvent(new Event(0, T0, "lifecycle", Optional.of(hibernated.id()), Map.of("to", "hibernated"),
                Optional.of(TenantId.DEFAULT)));
        catalog.close();

        catalog = SqlCatalog.openSqlite(dbFile);

        assertThat(catalog.find(hibernated.id())).contains(hibernated);
        assertThat(catalog.pendingOperations()).containsExactly(op);
        assertThat(catalog.checkpointsOf(hibernated.id())).containsExactly(checkpoint);
        assertThat(catalog.eventsAfter(0, Optional.empty(), Optional.empty(), 10)).containsExactly(event);
    }

    @Test
    void pendingOperationsOfEveryKindSurviveAReopenOldestFirst() {
        var expected = new ArrayList<Operation>();
        var kinds = Operation.Kind.values();
        for (int i = 0; i < kinds.length; i++) {
            // Started in reverse order of kind; two share an instant (the sandbox id breaks the tie).
            var checkpoint = i % 2 == 0 ? Optional.of(CheckpointId.random()) : Optional.<CheckpointId>empty();
            expected.add(new Operation(SandboxId.random(), kinds[i], checkpoint, T0.plusSeconds(Math.max(2, kinds.length - i))));
        }
        expected.forEach(catalog::beginOperation);
        catalog.close();

        catalog = SqlCatalog.openSqlite(dbFile);

        expected.sort(Comparator.comparing(Operation::startedAt).thenComparing(Operation::sandbox));
        assertThat(catalog.pendingOperations()).containsExactlyElementsOf(expected);
    }

    @Test
    void idsKeepIncreasingAcrossReopensEvenWhenTheNewestEventsAreGone() throws Exception {
        long last = 0;
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < 5; i++) {
                var e = catalog.appendEvent(new Event(0, T0, "lifecycle", Optional.empty(), Map.of(), Optional.empty()));
                assertThat(e.id()).isGreaterThan(last);
                last = e.id();
            }
            catalog.close();
            if (round == 1) {
                // Someone empties the table (the sqlite3 shell, say): ids must still not be reused.
                try (var c = DriverManager.getConnection("jdbc:sqlite:" + dbFile); var st = c.createStatement()) {
                    st.executeUpdate("DELETE FROM events");
                }
            }
            catalog = SqlCatalog.openSqlite(dbFile);
        }
        var afterAll = catalog.appendEvent(new Event(0, T0, "lifecycle", Optional.empty(), Map.of(), Optional.empty()));
        assertThat(afterAll.id()).isEqualTo(last + 1);
    }

    @Test
    void retentionKeepsTheNewestEventsAndTrimsEveryNAppends() {
        catalog.close();
        catalog = SqlCatalog.openSqlite(dbFile, new EventRetention(5, 3));
        var appended = new ArrayList<Event>();
        for (int i = 0; i < 20; i++) {
            appended.add(catalog.appendEvent(new Event(0, T0, "lifecycle", Optional.empty(), Map.of("i", (long) i), Optional.empty())));
            var kept = catalog.eventsAfter(0, Optional.empty(), Optional.empty(), 100);
            // Never more than keep + trimEvery - 1, always the newest ones, never a gap.
            assertThat(kept).hasSizeBetween(Math.min(appended.size(), 5), 7);
            assertThat(kept).containsExactlyElementsOf(appended.subList(appended.size() - kept.size(), appended.size()));
        }
        catalog.close();

        catalog = SqlCatalog.openSqlite(dbFile, new EventRetention(2, 1000)); // a reopen trims at once

        assertThat(catalog.eventsAfter(0, Optional.empty(), Optional.empty(), 100)).containsExactlyElementsOf(appended.subList(18, 20));
        assertThat(catalog.appendEvent(new Event(0, T0, "x", Optional.empty(), Map.of(), Optional.empty())).id())
                .isEqualTo(appended.getLast().id() + 1);
    }

    @Test
    void unboundedRetentionKeepsEverything() {
        catalog.close();
        catalog = SqlCatalog.openSqlite(dbFile, EventRetention.UNBOUNDED);
        for (int i = 0; i < 50; i++) catalog.appendEvent(new Event(0, T0, "lifecycle", Optional.empty(), Map.of(), Optional.empty()));
        catalog.close();
        catalog = SqlCatalog.openSqlite(dbFile, EventRetention.UNBOUNDED);
        assertThat(catalog.eventsAfter(0, Optional.empty(), Optional.empty(), 1000)).hasSize(50);
    }
}
