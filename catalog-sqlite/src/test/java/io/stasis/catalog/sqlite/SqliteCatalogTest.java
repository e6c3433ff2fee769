package io.stasis.catalog.sqlite;

import static io.stasis.catalog.sqlite.TestSandboxes.T0;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.auth.ApiKey;
import io.stasis.core.checkpoint.Checkpoint;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.checkpoint.DurableImage;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.events.Event;
import io.stasis.core.journal.Operation;
import io.stasis.core.policy.LifecyclePolicy;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxQuery;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.tenant.TenantId;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.DriverManager;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SqliteCatalogTest {
    private static final Comparator<Sandbox> LIST_ORDER =
            Comparator.comparing(Sandbox::createdAt).thenComparing(Sandbox::id);

    @TempDir
    Path dir;
    Path dbFile;
    SqliteCatalog catalog;

    @BeforeEach
    void open() {
        dbFile = dir.resolve("state/catalog.db");
        catalog = SqliteCatalog.open(dbFile);
    }

    @AfterEach
    void close() {
        catalog.close();
    }

    @Test
    void roundTripsEveryField() {
        var full = TestSandboxes.sandbox(Optional.of("my-box.1"), "base",
                new SandboxState.Stopped("processes_lost"), Instant.parse("2026-01-02T03:04:05.987654321Z"),
                new Resources(2.5, 2048, 1000),
                Map.of("PATH", "/usr/bin", "EMPTY", "", "UNICODE", "héllo ✓ \"quoted\"\nline"),
                Map.of("owner", "alice", "team.name/x-y", "infra", "json", "{\"not\":\"parsed\"}"));
        var minimal = TestSandboxes.sandbox(Optional.empty(), "tiny", SandboxState.RUNNING,
                Instant.EPOCH, Resources.DEFAULT, Map.of(), Map.of());
        var deleted = minimal.withState(SandboxState.DELETED);
        var deletedOther = TestSandboxes.sandbox(Optional.empty(), "tiny", SandboxState.DELETED,
                T0, Resources.DEFAULT, Map.of(), Map.of());

        catalog.insert(full);
        catalog.insert(minimal);
        catalog.insert(deletedOther);

        assertThat(catalog.find(full.id())).contains(full);
        assertThat(catalog.findByName(TenantId.DEFAULT, "my-box.1")).contains(full);
        assertThat(catalog.find(minimal.id())).contains(minimal);
        assertThat(catalog.find(deletedOther.id())).contains(deletedOther);
        catalog.update(deleted);
        assertThat(catalog.find(minimal.id())).contains(deleted);
    }

    @Test
    void theNewestDurableImageOfASandboxWinsWhateverOrderUploadsEndIn() {
        var sandbox = TestSandboxes.running(T0);
        catalog.insert(sandbox);
        assertThat(catalog.durableImage(sandbox.id())).isEmpty();
        var older = new DurableImage(CheckpointId.random(), "sha256:" + "a".repeat(64), T0.plusSeconds(1));
        var newer = new DurableImage(CheckpointId.random(), "sha256:" + "b".repeat(64), T0.plusSeconds(2));
        catalog.recordDurableImage(sandbox.id(), newer);
        catalog.recordDurableImage(sandbox.id(), older);
        assertThat(catalog.durableImage(sandbox.id())).contains(newer);
        var newest = new DurableImage(CheckpointId.random(), "sha256:" + "c".repeat(64), T0.plusSeconds(3));
        catalog.recordDurableImage(sandbox.id(), newest);
        assertThat(catalog.durableImage(sandbox.id())).contains(newest);
        catalog.update(sandbox.withState(SandboxState.PAUSED));
        assertThat(catalog.durableImage(sandbox.id())).as("a change of the sandbox's row keeps it").contains(newest);
        catalog.delete(sandbox.id());
        assertThat(catalog.durableImage(sandbox.id())).as("forgotten with the sandbox").isEmpty();
    }

    @Test
    void findsNothingForUnknownIdsAndNames() {
        assertThat(catalog.find(SandboxId.random())).isEmpty();
        assertThat(catalog.findByName(TenantId.DEFAULT, "nobody")).isEmpty();
    }

    @Test
    void stoppedReasonMayBeNull() {
        var s = TestSandboxes.running(T0).withState(new SandboxState.Stopped(null));
        catalog.insert(s);
        assertThat(catalog.find(s.id())).contains(s);
    }

    @Test
    void insertWithATakenNameIsNameTaken() {
        catalog.insert(TestSandboxes.named("web"));

        assertThatThrownBy(() -> catalog.insert(TestSandboxes.named("web")))
                .isInstanceOfSatisfying(StasisException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.NAME_TAKEN);
                    assertThat(e.details()).containsEntry("name", "web");
                });
        assertThat(catalog.all()).hasSize(1);
    }

    @Test
    void unnamedSandboxesNeverCollide() {
        catalog.insert(TestSandboxes.running(T0));
        catalog.insert(TestSandboxes.running(T0));
        assertThat(catalog.all()).hasSize(2);
    }

    @Test
    void updateToATakenNameIsNameTakenAndChangesNothing() {
        catalog.insert(TestSandboxes.named("a"));
        var b = TestSandboxes.named("b");
        catalog.insert(b);
        var renamed = new Sandbox(b.id(), Optional.of("a"), b.template(), b.state(), b.createdAt(), b.resources(), b.env(), b.metadata(),
                b.parentId(), b.checkpointId(), b.lifecycle(), b.tenant());

        assertThatThrownBy(() -> catalog.update(renamed))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NAME_TAKEN));
        assertThat(catalog.find(b.id())).contains(b);
    }

    @Test
    void insertingTheSameIdTwiceIsInternal() {
        var s = TestSandboxes.running(T0);
        catalog.insert(s);
        assertThatThrownBy(() -> catalog.insert(s))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL))
                .hasMessageContaining(s.id().value());
    }

    @Test
    void updateReplacesEveryColumn() {
        var before = TestSandboxes.named("old");
        catalog.insert(before);
        var after = new Sandbox(before.id(), Optional.empty(), "base",
                new SandboxState.Hibernated(CheckpointId.random(), 123_456_789_012L, T0.plusSeconds(4)),
                T0.plusSeconds(5), new Resources(0.5, 256, 64), Map.of("A", "1"), Map.of("k", "v"),
                Optional.of(SandboxId.random()), Optional.of(CheckpointId.random()),
                new LifecyclePolicy(Optional.empty(), Optional.of(Duration.ofSeconds(30)), Optional.of(Duration.ofMinutes(1)), Optional.empty(), Optional.empty(),
                        Optional.of(Duration.ofDays(2)), false), TenantId.DEFAULT);

        catalog.update(after);

        assertThat(catalog.find(before.id())).contains(after);
        assertThat(catalog.findByName(TenantId.DEFAULT, "old")).isEmpty();
        catalog.insert(TestSandboxes.named("old")); // the name is free again
    }

    @Test
    void updateOfAnUnknownSandboxIsNotFound() {
        var ghost = TestSandboxes.running(T0);
        assertThatThrownBy(() -> catalog.update(ghost))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.SANDBOX_NOT_FOUND));
        assertThat(catalog.all()).isEmpty();
    }

    @Test
    void deleteIsIdempotentAndFreesTheName() {
        var s = TestSandboxes.named("gone");
        catalog.insert(s);

        catalog.delete(s.id());
        catalog.delete(s.id());
        catalog.delete(SandboxId.random());

        assertThat(catalog.find(s.id())).isEmpty();
        assertThat(catalog.all()).isEmpty();
        catalog.insert(TestSandboxes.named("gone"));
    }

    @Test
    void pagesThroughEverySandboxInOrderWithoutGapsOrDuplicates() {
        var inserted = new ArrayList<Sandbox>();
        // Many sandboxes share a creation time, so the id must break ties consistently.
        for (int i = 0; i < 250; i++) {
            var s = TestSandboxes.running(T0.plusNanos(i / 7));
            catalog.insert(s);
            inserted.add(s);
        }
        inserted.sort(LIST_ORDER);

        var pages = new ArrayList<List<Sandbox>>();
        Optional<String> cursor = Optional.empty();
        do {
            var page = catalog.list(new SandboxQuery(Optional.empty(), Map.of(), cursor, 100, Optional.empty()));
            pages.add(page.items());
            cursor = page.nextCursor();
        } while (cursor.isPresent());

        assertThat(pages).extracting(List::size).containsExactly(100, 100, 50);
        assertThat(pages.stream().flatMap(List::stream).toList()).containsExactlyElementsOf(inserted);
    }

    @Test
    void aFullLastPageHasNoNextCursor() {
        for (int i = 0; i < 4; i++) catalog.insert(TestSandboxes.running(T0.plusSeconds(i)));

        var first = catalog.list(new SandboxQuery(Optional.empty(), Map.of(), Optional.empty(), 2, Optional.empty()));
        var second = catalog.list(new SandboxQuery(Optional.empty(), Map.of(), first.nextCursor(), 2, Optional.empty()));

        assertThat(first.nextCursor()).isPresent();
        assertThat(second.items()).hasSize(2);
        assertThat(second.nextCursor()).isEmpty();
    }

    @Test
    void emptyCatalogListsNothing() {
        var page = catalog.list(SandboxQuery.all());
        assertThat(page.items()).isEmpty();
        assertThat(page.nextCursor()).isEmpty();
    }

    @Test
    void pagingContinuesAfterTheCursorEvenIfItsSandboxWasDeleted() {
        var sandboxes = IntStream.range(0, 5).mapToObj(i -> TestSandboxes.running(T0.plusSeconds(i))).toList();
        sandboxes.forEach(catalog::insert);

        var first = catalog.list(new SandboxQuery(Optional.empty(), Map.of(), Optional.empty(), 2, Optional.empty()));
        catalog.delete(sandboxes.get(1).id());
        var rest = catalog.list(new SandboxQuery(Optional.empty(), Map.of(), first.nextCursor(), 10, Optional.empty()));

        assertThat(rest.items()).containsExactlyElementsOf(sandboxes.subList(2, 5));
    }

    @Test
    void filtersByState() {
        var running = TestSandboxes.running(T0);
        var stopped = TestSandboxes.running(T0.plusSeconds(1)).withState(new SandboxState.Stopped("idle"));
        var running2 = TestSandboxes.running(T0.plusSeconds(2));
        List.of(running, stopped, running2).forEach(catalog::insert);

        assertThat(catalog.list(query(Optional.of("running"), Map.of())).items()).containsExactly(running, running2);
        assertThat(catalog.list(query(Optional.of("stopped"), Map.of())).items()).containsExactly(stopped);
    }

    @Test
    void listHidesSandboxesBeingDeletedButAllShowsThem() {
        var live = TestSandboxes.running(T0);
        var dying = TestSandboxes.running(T0.plusSeconds(1)).withState(SandboxState.DELETED);
        catalog.insert(live);
        catalog.insert(dying);

        assertThat(catalog.list(SandboxQuery.all()).items()).containsExactly(live);
        assertThat(catalog.all()).containsExactly(live, dying);
    }

    @Test
    void filtersByMetadataRequiringEveryEntry() {
        var aliceWeb = TestSandboxes.withMetadata(T0, Map.of("owner", "alice", "app.kind/x", "web"));
        var aliceDb = TestSandboxes.withMetadata(T0.plusSeconds(1), Map.of("owner", "alice", "app.kind/x", "db"));
        var bob = TestSandboxes.withMetadata(T0.plusSeconds(2), Map.of("owner", "bob", "app.kind/x", "web"));
        var none = TestSandboxes.running(T0.plusSeconds(3));
        List.of(aliceWeb, aliceDb, bob, none).forEach(catalog::insert);

        assertThat(catalog.list(query(Optional.empty(), Map.of("owner", "alice"))).items()).containsExactly(aliceWeb, aliceDb);
        assertThat(catalog.list(query(Optional.empty(), Map.of("app.kind/x", "web"))).items()).containsExactly(aliceWeb, bob);
        assertThat(catalog.list(query(Optional.empty(), Map.of("owner", "alice", "app.kind/x", "web"))).items()).containsExactly(aliceWeb);
        assertThat(catalog.list(query(Optional.empty(), Map.of("owner", "carol"))).items()).isEmpty();
        assertThat(catalog.list(query(Optional.empty(), Map.of("$.owner", "alice"))).items()).isEmpty();
        assertThat(catalog.list(query(Optional.of("stopped"), Map.of("owner", "alice"))).items()).isEmpty();
    }

    @Test
    void filtersAndCursorsCombine() {
        var expected = new ArrayList<Sandbox>();
        for (int i = 0; i < 30; i++) {
            var s = TestSandboxes.withMetadata(T0.plusMillis(i), Map.of("parity", i % 2 == 0 ? "even" : "odd"));
            catalog.insert(s);
            if (i % 2 == 0) expected.add(s);
        }
        var seen = new ArrayList<Sandbox>();
        Optional<String> cursor = Optional.empty();
        do {
            var page = catalog.list(new SandboxQuery(Optional.of("running"), Map.of("parity", "even"), cursor, 4, Optional.empty()));
            seen.addAll(page.items());
            cursor = page.nextCursor();
        } while (cursor.isPresent());

        assertThat(seen).containsExactlyElementsOf(expected);
    }

    @Test
    void garbageCursorsAreInvalidRequests() {
        catalog.insert(TestSandboxes.running(T0));
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
        var s = TestSandboxes.sandbox(Optional.of("keep"), "base", new SandboxState.Stopped("host_reboot"),
                T0, new Resources(4, 4096, 2048), Map.of("K", "v"), Map.of("m", "n"));
        var key = new ApiKey("key_0123456789abcdef", TenantId.DEFAULT, "ab".repeat(32), true, T0);
        catalog.insert(s);
        catalog.insertApiKey(key);
        catalog.close();

        catalog = SqliteCatalog.open(dbFile);

        assertThat(catalog.find(s.id())).contains(s);
        assertThat(catalog.findByName(TenantId.DEFAULT, "keep")).contains(s);
        assertThat(catalog.findApiKeyByHash(key.secretHash())).contains(key);
        assertThat(catalog.hasRootKey()).isTrue();
    }

    @Test
    void theFileAndItsSideFilesAreOwnerOnly() throws Exception {
        catalog.insert(TestSandboxes.running(T0)); // makes SQLite create the -wal and -shm files
        var ownerOnly = PosixFilePermissions.fromString("rw-------");

        assertThat(Files.getPosixFilePermissions(dbFile)).isEqualTo(ownerOnly);
        for (String suffix : List.of("-wal", "-shm")) {
            var side = dbFile.resolveSibling(dbFile.getFileName() + suffix);
            assertThat(side).exists();
            assertThat(Files.getPosixFilePermissions(side)).as(side.toString()).isEqualTo(ownerOnly);
        }
    }

    @Test
    void openTightensAnExistingFileToOwnerOnly() throws Exception {
        catalog.close();
        Files.setPosixFilePermissions(dbFile, PosixFilePermissions.fromString("rw-r--r--"));

        catalog = SqliteCatalog.open(dbFile);

        assertThat(Files.getPosixFilePermissions(dbFile)).isEqualTo(PosixFilePermissions.fromString("rw-------"));
    }

    @Test
    void apiKeysAreFoundByHashAndTheRootFlagIsKept() {
        assertThat(catalog.hasRootKey()).isFalse();
        var plain = new ApiKey("key_aaaaaaaaaaaaaaaa", TenantId.DEFAULT, "11".repeat(32), false, T0);
        catalog.insertApiKey(plain);
        assertThat(catalog.hasRootKey()).isFalse();

        var root = new ApiKey("key_bbbbbbbbbbbbbbbb", TenantId.DEFAULT, "22".repeat(32), true, T0.plusSeconds(1));
        catalog.insertApiKey(root);

        assertThat(catalog.hasRootKey()).isTrue();
        assertThat(catalog.findApiKeyByHash(plain.secretHash())).contains(plain);
        assertThat(catalog.findApiKeyByHash(root.secretHash())).contains(root);
        assertThat(catalog.findApiKeyByHash("33".repeat(32))).isEmpty();
    }

    @Test
    void aDuplicateSecretHashIsRefused() {
        catalog.insertApiKey(new ApiKey("key_aaaaaaaaaaaaaaaa", TenantId.DEFAULT, "11".repeat(32), false, T0));
        assertThatThrownBy(() -> catalog.insertApiKey(new ApiKey("key_cccccccccccccccc", TenantId.DEFAULT, "11".repeat(32), true, T0)))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL));
        assertThat(catalog.hasRootKey()).isFalse();
    }

    @Test
    void concurrentInsertsFromFiftyVirtualThreadsAllLand() throws Exception {
        var sandboxes = IntStream.range(0, 50).mapToObj(i -> TestSandboxes.named("box-" + i)).toList();

        runConcurrently(sandboxes.stream().<Callable<Object>>map(s -> () -> {
            catalog.insert(s);
            return catalog.find(s.id()).orElseThrow();
        }).toList());

        assertThat(catalog.all()).containsExactlyInAnyOrderElementsOf(sandboxes);
    }

    @Test
    void concurrentInsertsOfOneNameLetExactlyOneWin() throws Exception {
        var contenders = IntStream.range(0, 50).mapToObj(i -> TestSandboxes.named("contested")).toList();

        var outcomes = runConcurrently(contenders.stream().<Callable<Object>>map(s -> () -> {
            try {
                catalog.insert(s);
                return "won";
            } catch (StasisException e) {
                return e.code();
            }
        }).toList());

        assertThat(outcomes).filteredOn("won"::equals).hasSize(1);
        assertThat(outcomes).filteredOn(ErrorCode.NAME_TAKEN::equals).hasSize(49);
        assertThat(catalog.all()).hasSize(1);
    }

    @Test
    void aClosedCatalogRefusesCallsAndClosesTwiceQuietly() {
        catalog.close();
        catalog.close();
        assertThatThrownBy(() -> catalog.all())
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL))
                .hasMessageContaining("closed");
    }

    // --- live state: new sandbox fields ---

    @Test
    void roundTripsPausedHibernatedLineageAndLifecycle() {
        var paused = TestSandboxes.running(T0).withState(SandboxState.PAUSED);
        var hibernated = TestSandboxes.running(T0.plusSeconds(1)).withState(new SandboxState.Hibernated(
                CheckpointId.random(), 9_876_543_210L, Instant.parse("2026-03-01T12:34:56.000000001Z")));
        var emptyImage = TestSandboxes.running(T0.plusSeconds(2)).withState(new SandboxState.Hibernated(CheckpointId.random(), 0, T0));
        var fork = TestSandboxes.forkOf(paused.id(), CheckpointId.random(), T0.plusSeconds(3));
        var neverMoves = TestSandboxes.running(T0.plusSeconds(4)).withLifecycle(new LifecyclePolicy(
                Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), false));
        var everyStep = TestSandboxes.running(T0.plusSeconds(5)).withLifecycle(new LifecyclePolicy(
                Optional.of(Duration.ofMillis(1500)), Optional.of(Duration.ofSeconds(7)), Optional.of(Duration.ofNanos(1)), Optional.of(Duration.ofHours(25)),
                Optional.of(Duration.ofDays(999_999_999)), Optional.of(Duration.ofSeconds(59, 999_999_999)), true));
        var all = List.of(paused, hibernated, emptyImage, fork, neverMoves, everyStep);

        all.forEach(catalog::insert);

        for (var s : all) assertThat(catalog.find(s.id())).as(s.toString()).contains(s);
        assertThat(catalog.all()).containsExactlyElementsOf(all);
    }

    @Test
    void updateMovesThroughEveryStateAndLeavesNoStaleStateColumns() throws Exception {
        var s = TestSandboxes.running(T0);
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
        catalog = SqliteCatalog.open(dbFile);
    }

    @Test
    void theSchemaRefusesStateColumnsThatContradictTheState() throws Exception {
        var s = TestSandboxes.running(T0);
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
        catalog = SqliteCatalog.open(dbFile);
        assertThat(catalog.find(s.id())).contains(s);
    }

    @Test
    void filtersByTheNewStates() {
        var running = TestSandboxes.running(T0);
        var paused = TestSandboxes.running(T0.plusSeconds(1)).withState(SandboxState.PAUSED);
        var hibernated = TestSandboxes.running(T0.plusSeconds(2)).withState(new SandboxState.Hibernated(CheckpointId.random(), 1, T0));
        var paused2 = TestSandboxes.running(T0.plusSeconds(3)).withState(SandboxState.PAUSED);
        List.of(running, paused, hibernated, paused2).forEach(catalog::insert);

        assertThat(catalog.list(query(Optional.of("paused"), Map.of())).items()).containsExactly(paused, paused2);
        assertThat(catalog.list(query(Optional.of("hibernated"), Map.of())).items()).containsExactly(hibernated);
        assertThat(catalog.list(query(Optional.of("running"), Map.of())).items()).containsExactly(running);
    }

    @Test
    void childrenAreTheForksOfOneParentOldestFirstEvenAfterItIsDeleted() {
        var parent = TestSandboxes.running(T0);
        var other = TestSandboxes.running(T0);
        var checkpoint = CheckpointId.random();
        var late = TestSandboxes.forkOf(parent.id(), checkpoint, T0.plusSeconds(9));
        var early = TestSandboxes.forkOf(parent.id(), checkpoint, T0.plusSeconds(1));
        // Two forks made in the same instant: the id breaks the tie, as in list().
        var tieA = TestSandboxes.withId(TestSandboxes.forkOf(parent.id(), CheckpointId.random(), T0.plusSeconds(5)),
                new SandboxId("sbx_aaaaaaaaaaaaaaaa"));
        var tieB = TestSandboxes.withId(TestSandboxes.forkOf(parent.id(), CheckpointId.random(), T0.plusSeconds(5)),
                new SandboxId("sbx_bbbbbbbbbbbbbbbb"));
        var dying = TestSandboxes.forkOf(parent.id(), checkpoint, T0.plusSeconds(10)).withState(SandboxState.DELETED);
        var nephew = TestSandboxes.forkOf(other.id(), checkpoint, T0.plusSeconds(2));
        var grandchild = TestSandboxes.forkOf(early.id(), CheckpointId.random(), T0.plusSeconds(3));
        List.of(parent, other, late, tieB, early, tieA, dying, nephew, grandchild).forEach(catalog::insert);

        assertThat(catalog.children(parent.id())).containsExactly(early, tieA, tieB, late, dying);
        assertThat(catalog.children(early.id())).containsExactly(grandchild);
        assertThat(catalog.children(late.id())).isEmpty();
        assertThat(catalog.children(SandboxId.random())).isEmpty();

        catalog.delete(parent.id());
        assertThat(catalog.children(parent.id())).containsExactly(early, tieA, tieB, late, dying);
        assertThat(catalog.find(early.id()).orElseThrow().parentId()).contains(parent.id());
    }

    @Test
    void reopeningKeepsLiveStateOperationsCheckpointsAndEvents() {
        var hibernated = TestSandboxes.forkOf(SandboxId.random(), CheckpointId.random(), T0)
                .withState(new SandboxState.Hibernated(CheckpointId.random(), 123, T0.plusSeconds(1)));
        var op = new Operation(hibernated.id(), Operation.Kind.RESTORE, Optional.of(CheckpointId.random()), T0.plusSeconds(2));
        var checkpoint = TestSandboxes.checkpoint(hibernated.id(), T0);
        catalog.insert(hibernated);
        catalog.beginOperation(op);
        catalog.insertCheckpoint(checkpoint);
        var event = catalog.appendEvent(new Event(0, T0, "lifecycle", Optional.of(hibernated.id()), Map.of("to", "hibernated"),
                Optional.of(TenantId.DEFAULT)));
        catalog.close();

        catalog = SqliteCatalog.open(dbFile);

        assertThat(catalog.find(hibernated.id())).contains(hibernated);
        assertThat(catalog.pendingOperations()).containsExactly(op);
        assertThat(catalog.checkpointsOf(hibernated.id())).containsExactly(checkpoint);
        assertThat(catalog.eventsAfter(0, Optional.empty(), Optional.empty(), 10)).containsExactly(event);
    }

    // --- the operation journal ---

    @Nested
    class Operations {
        @Test
        void completeOperationRecordsTheOutcomeAndEndsTheOperationTogether() {
            var s = TestSandboxes.running(T0);
            var other = TestSandboxes.running(T0);
            catalog.insert(s);
            catalog.insert(other);
            var image = CheckpointId.random();
            var otherOp = new Operation(other.id(), Operation.Kind.PAUSE, Optional.empty(), T0);
            catalog.beginOperation(new Operation(s.id(), Operation.Kind.HIBERNATE, Optional.of(image), T0.plusSeconds(1)));
            catalog.beginOperation(otherOp);
            var outcome = s.withState(new SandboxState.Hibernated(image, 1 << 20, T0.plusSeconds(2)));

            catalog.completeOperation(outcome);

            assertThat(catalog.find(s.id())).contains(outcome);
            assertThat(catalog.pendingOperations()).containsExactly(otherOp);
            assertThat(catalog.find(other.id())).contains(other);
        }

        @Test
        void aFailedCompleteChangesNeitherTheSandboxNorItsOperation() {
            catalog.insert(TestSandboxes.named("taken"));
            var s = TestSandboxes.named("mine");
            catalog.insert(s);
            var op = new Operation(s.id(), Operation.Kind.STOP, Optional.empty(), T0);
            catalog.beginOperation(op);
            // The outcome cannot be written (its name is taken): the transaction must not end the operation either.
            var badOutcome = new Sandbox(s.id(), Optional.of("taken"), s.template(), new SandboxState.Stopped("asked"),
                    s.createdAt(), s.resources(), s.env(), s.metadata(), s.parentId(), s.checkpointId(), s.lifecycle(), s.tenant());

            assertThatThrownBy(() -> catalog.completeOperation(badOutcome))
                    .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NAME_TAKEN));

            assertThat(catalog.find(s.id())).contains(s);
            assertThat(catalog.pendingOperations()).containsExactly(op);
        }

        @Test
        void completingForAnUnknownSandboxIsNotFoundAndKeepsTheOperation() {
            var ghost = TestSandboxes.running(T0);
            var op = new Operation(ghost.id(), Operation.Kind.FORK, Optional.of(CheckpointId.random()), T0);
            catalog.beginOperation(op); // an operation may be journaled before its sandbox's row exists

            assertThatThrownBy(() -> catalog.completeOperation(ghost))
                    .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.SANDBOX_NOT_FOUND));
            assertThat(catalog.all()).isEmpty();
            assertThat(catalog.pendingOperations()).containsExactly(op);
        }

        @Test
        void beginReplacesTheSandboxsOperation() {
            var s = TestSandboxes.running(T0);
            catalog.insert(s);
            catalog.beginOperation(new Operation(s.id(), Operation.Kind.CHECKPOINT, Optional.of(CheckpointId.random()), T0));
            var second = new Operation(s.id(), Operation.Kind.RESUME, Optional.empty(), T0.plusSeconds(1));

            catalog.beginOperation(second);

            assertThat(catalog.pendingOperations()).containsExactly(second);
        }

        @Test
        void abandonEndsOnlyThatOperationAndIsIdempotent() {
            var a = new Operation(SandboxId.random(), Operation.Kind.PAUSE, Optional.empty(), T0);
            var b = new Operation(SandboxId.random(), Operation.Kind.START, Optional.empty(), T0.plusSeconds(1));
            catalog.beginOperation(a);
            catalog.beginOperation(b);

            catalog.abandonOperation(a.sandbox());
            catalog.abandonOperation(a.sandbox());
            catalog.abandonOperation(SandboxId.random());

            assertThat(catalog.pendingOperations()).containsExactly(b);
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

            catalog = SqliteCatalog.open(dbFile);

            expected.sort(Comparator.comparing(Operation::startedAt).thenComparing(Operation::sandbox));
            assertThat(catalog.pendingOperations()).containsExactlyElementsOf(expected);
        }

        @Test
        void deleteEndsTheSandboxsOperationButKeepsItsCheckpoints() {
            var s = TestSandboxes.running(T0);
            catalog.insert(s);
            var checkpoint = TestSandboxes.checkpoint(s.id(), T0);
            catalog.insertCheckpoint(checkpoint);
            catalog.beginOperation(new Operation(s.id(), Operation.Kind.STOP, Optional.empty(), T0));

            catalog.delete(s.id());

            assertThat(catalog.find(s.id())).isEmpty();
            assertThat(catalog.pendingOperations()).isEmpty();
            assertThat(catalog.checkpointsOf(s.id())).containsExactly(checkpoint);
            assertThat(catalog.findCheckpoint(checkpoint.id())).contains(checkpoint);
        }
    }

    // --- checkpoints ---

    @Nested
    class Checkpoints {
        @Test
        void roundTripsEveryField() {
            var sandbox = SandboxId.random();
            var named = new Checkpoint(CheckpointId.random(), sandbox, Optional.of("before upgrade ✓"), true,
                    Checkpoint.Purpose.USER, 5_000_000_000L, Instant.parse("2026-01-02T03:04:05.000000007Z"));
            var hibernation = new Checkpoint(CheckpointId.random(), sandbox, Optional.empty(), true,
                    Checkpoint.Purpose.HIBERNATION, 1, T0);
            var rootOnly = new Checkpoint(CheckpointId.random(), sandbox, Optional.empty(), false,
                    Checkpoint.Purpose.FORK, 0, Instant.EPOCH);

            for (var c : List.of(named, hibernation, rootOnly)) catalog.insertCheckpoint(c);

            for (var c : List.of(named, hibernation, rootOnly)) assertThat(catalog.findCheckpoint(c.id())).contains(c);
            assertThat(catalog.findCheckpoint(CheckpointId.random())).isEmpty();
        }

        @Test
        void listsOneSandboxsCheckpointsOrAllOldestFirst() {
            var a = SandboxId.random();
            var b = SandboxId.random();
            var a3 = TestSandboxes.checkpoint(a, T0.plusSeconds(3));
            var a1 = TestSandboxes.checkpoint(a, T0.plusSeconds(1));
            // Same instant: ordered by id (fixed ids, so that the order does not depend on random ones).
            var b2 = new Checkpoint(new CheckpointId("ckpt_3333333333333333"), b, Optional.empty(), true, Checkpoint.Purpose.USER, 4096,
                    T0.plusSeconds(2));
            var tie1 = new Checkpoint(new CheckpointId("ckpt_1111111111111111"), a, Optional.empty(), false, Checkpoint.Purpose.USER, 0, T0.plusSeconds(2));
            var tie2 = new Checkpoint(new CheckpointId("ckpt_2222222222222222"), a, Optional.empty(), false, Checkpoint.Purpose.USER, 0, T0.plusSeconds(2));
            for (var c : List.of(a3, tie2, b2, a1, tie1)) catalog.insertCheckpoint(c);

            assertThat(catalog.checkpointsOf(a)).containsExactly(a1, tie1, tie2, a3);
            assertThat(catalog.checkpointsOf(b)).containsExactly(b2);
            assertThat(catalog.checkpointsOf(SandboxId.random())).isEmpty();
            assertThat(catalog.allCheckpoints()).containsExactly(a1, tie1, tie2, b2, a3);
        }

        @Test
        void namesNeedNotBeUnique() {
            var s = SandboxId.random();
            var first = new Checkpoint(CheckpointId.random(), s, Optional.of("same"), true, Checkpoint.Purpose.USER, 1, T0);
            var second = new Checkpoint(CheckpointId.random(), s, Optional.of("same"), true, Checkpoint.Purpose.USER, 2, T0.plusSeconds(1));
            catalog.insertCheckpoint(first);
            catalog.insertCheckpoint(second);
            assertThat(catalog.checkpointsOf(s)).containsExactly(first, second);
        }

        @Test
        void aDuplicateIdIsInternalAndKeepsTheFirst() {
            var c = TestSandboxes.checkpoint(SandboxId.random(), T0);
            catalog.insertCheckpoint(c);
            var clash = new Checkpoint(c.id(), SandboxId.random(), Optional.empty(), false, Checkpoint.Purpose.FORK, 0, T0);

            assertThatThrownBy(() -> catalog.insertCheckpoint(clash))
                    .isInstanceOfSatisfying(StasisException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL);
                        assertThat(e.details()).containsEntry("checkpoint", c.id().value());
                    });
            assertThat(catalog.allCheckpoints()).containsExactly(c);
        }

        @Test
        void deleteIsIdempotentAndTouchesOnlyThatCheckpoint() {
            var s = SandboxId.random();
            var gone = TestSandboxes.checkpoint(s, T0);
            var kept = TestSandboxes.checkpoint(s, T0.plusSeconds(1));
            catalog.insertCheckpoint(gone);
            catalog.insertCheckpoint(kept);

            catalog.deleteCheckpoint(gone.id());
            catalog.deleteCheckpoint(gone.id());
            catalog.deleteCheckpoint(CheckpointId.random());

            assertThat(catalog.findCheckpoint(gone.id())).isEmpty();
            assertThat(catalog.allCheckpoints()).containsExactly(kept);
        }
    }

    // --- events ---

    @Nested
    class Events {
        @Test
        void appendGivesIncreasingIdsAndReturnsWhatReadsBack() {
            var s = SandboxId.random();
            var first = catalog.appendEvent(new Event(0, T0, "lifecycle", Optional.of(s),
                    Map.of("sandboxId", s.value(), "from", "running", "to", "paused", "reason", "idle"), Optional.of(TenantId.DEFAULT)));
            var second = catalog.appendEvent(new Event(999, T0.plusNanos(1), "checkpoint", Optional.empty(), Map.of(), Optional.empty()));

            assertThat(first.id()).isPositive();
            assertThat(second.id()).isGreaterThan(first.id()); // the id passed in is ignored
            assertThat(catalog.eventsAfter(0, Optional.empty(), Optional.empty(), 10)).containsExactly(first, second);
            assertThat(catalog.eventsAfter(first.id(), Optional.empty(), Optional.empty(), 10)).containsExactly(second);
            assertThat(catalog.eventsAfter(second.id(), Optional.empty(), Optional.empty(), 10)).isEmpty();
        }

        @Test
        void dataRoundTripsAsPlainJsonValues() {
            var nested = new LinkedHashMap<String, Object>();
            nested.put("null inside", null);
            nested.put("list", Arrays.asList(1L, "two", null, true, List.of(), Map.of("deep", -0.5)));
            var data = Map.<String, Object>of(
                    "string", "héllo ✓ \"quoted\"\n",
                    "long", Long.MAX_VALUE,
                    "negative", Long.MIN_VALUE,
                    "double", 0.1,
                    "big double", 1.0e300,
                    "whole double", 2.0,
                    "true", true,
                    "false", false,
                    "nested", nested,
                    "empty", Map.of());

            var appended = catalog.appendEvent(new Event(0, T0, "fork", Optional.empty(), data, Optional.empty()));

            assertThat(appended.data()).isEqualTo(data);
            assertThat(catalog.eventsAfter(0, Optional.empty(), Optional.empty(), 1)).containsExactly(appended);
        }

        @Test
        void smallerIntegersAndFloatsComeBackAsLongsAndDoubles() {
            var appended = catalog.appendEvent(new Event(0, T0, "error", Optional.empty(),
                    Map.of("int", 5, "short", (short) 6, "byte", (byte) 7, "float", 0.5f, "list", List.of(8)), Optional.empty()));

            var expected = Map.<String, Object>of("int", 5L, "short", 6L, "byte", 7L, "float", 0.5, "list", List.of(8L));
            assertThat(appended.data()).isEqualTo(expected);
            assertThat(catalog.eventsAfter(0, Optional.empty(), Optional.empty(), 1).getFirst().data()).isEqualTo(expected);
        }

        @Test
        void dataJsonCannotHoldExactlyIsRefusedAndNothingIsStored() {
            var bad = new LinkedHashMap<Object, Object>();
            bad.put(1, "non-string key");
            for (Map<String, Object> data : List.<Map<String, Object>>of(
                    Map.of("at", Instant.EPOCH),
                    Map.of("nan", Double.NaN),
                    Map.of("inf", Float.POSITIVE_INFINITY),
                    Map.of("nested", Map.of("id", SandboxId.random())),
                    Map.of("list", List.of(new BigDecimal("1.5"))),
                    Map.of("map", bad))) {
                assertThatThrownBy(() -> catalog.appendEvent(new Event(0, T0, "error", Optional.empty(), data, Optional.empty())))
                        .as(data.toString()).isInstanceOf(IllegalArgumentException.class);
            }
            assertThat(catalog.eventsAfter(0, Optional.empty(), Optional.empty(), 100)).isEmpty();
        }

        @Test
        void filtersBySandboxAndStopsAtTheLimit() {
            var a = SandboxId.random();
            var b = SandboxId.random();
            var ofA = new ArrayList<Event>();
            var everything = new ArrayList<Event>();
            for (int i = 0; i < 30; i++) {
                var sandbox = switch (i % 3) {
                    case 0 -> Optional.of(a);
                    case 1 -> Optional.of(b);
                    default -> Optional.<SandboxId>empty();
                };
                var e = catalog.appendEvent(new Event(0, T0.plusSeconds(i), "lifecycle", sandbox, Map.of("i", (long) i),
                        sandbox.map(x -> TenantId.DEFAULT)));
                everything.add(e);
                if (sandbox.equals(Optional.of(a))) ofA.add(e);
            }

            assertThat(catalog.eventsAfter(0, Optional.of(a), Optional.empty(), 100)).containsExactlyElementsOf(ofA);
            assertThat(catalog.eventsAfter(0, Optional.of(a), Optional.empty(), 4)).containsExactlyElementsOf(ofA.subList(0, 4));
            assertThat(catalog.eventsAfter(ofA.get(3).id(), Optional.of(a), Optional.empty(), 4)).containsExactlyElementsOf(ofA.subList(4, 8));
            // A resume point need not be one of this sandbox's events.
            assertThat(catalog.eventsAfter(everything.get(10).id(), Optional.of(a), Optional.empty(), 100))
                    .containsExactlyElementsOf(ofA.subList(4, 10));
            assertThat(catalog.eventsAfter(0, Optional.empty(), Optional.empty(), 7)).containsExactlyElementsOf(everything.subList(0, 7));
            assertThat(catalog.eventsAfter(0, Optional.of(SandboxId.random()), Optional.empty(), 100)).isEmpty();
            assertThat(catalog.eventsAfter(0, Optional.empty(), Optional.empty(), 0)).isEmpty();
            assertThatThrownBy(() -> catalog.eventsAfter(0, Optional.empty(), Optional.empty(), -1)).isInstanceOf(IllegalArgumentException.class);
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
                catalog = SqliteCatalog.open(dbFile);
            }
            var afterAll = catalog.appendEvent(new Event(0, T0, "lifecycle", Optional.empty(), Map.of(), Optional.empty()));
            assertThat(afterAll.id()).isEqualTo(last + 1);
        }

        @Test
        void retentionKeepsTheNewestEventsAndTrimsEveryNAppends() {
            catalog.close();
            catalog = SqliteCatalog.open(dbFile, new EventRetention(5, 3));
            var appended = new ArrayList<Event>();
            for (int i = 0; i < 20; i++) {
                appended.add(catalog.appendEvent(new Event(0, T0, "lifecycle", Optional.empty(), Map.of("i", (long) i), Optional.empty())));
                var kept = catalog.eventsAfter(0, Optional.empty(), Optional.empty(), 100);
                // Never more than keep + trimEvery - 1, always the newest ones, never a gap.
                assertThat(kept).hasSizeBetween(Math.min(appended.size(), 5), 7);
                assertThat(kept).containsExactlyElementsOf(appended.subList(appended.size() - kept.size(), appended.size()));
            }
            catalog.close();

            catalog = SqliteCatalog.open(dbFile, new EventRetention(2, 1000)); // a reopen trims at once

            assertThat(catalog.eventsAfter(0, Optional.empty(), Optional.empty(), 100)).containsExactlyElementsOf(appended.subList(18, 20));
            assertThat(catalog.appendEvent(new Event(0, T0, "x", Optional.empty(), Map.of(), Optional.empty())).id())
                    .isEqualTo(appended.getLast().id() + 1);
        }

        @Test
        void concurrentAppendsGetDistinctIdsInCommitOrder() throws Exception {
            var appended = runConcurrently(IntStream.range(0, 50).<Callable<Object>>mapToObj(i -> () ->
                    catalog.appendEvent(new Event(0, T0, "lifecycle", Optional.empty(), Map.of("i", (long) i), Optional.empty()))).toList());

            var byId = appended.stream().map(Event.class::cast).sorted(Comparator.comparingLong(Event::id)).toList();
            assertThat(byId).extracting(Event::id).doesNotHaveDuplicates();
            assertThat(catalog.eventsAfter(0, Optional.empty(), Optional.empty(), 100)).containsExactlyElementsOf(byId);
        }

        @Test
        void unboundedRetentionKeepsEverything() {
            catalog.close();
            catalog = SqliteCatalog.open(dbFile, EventRetention.UNBOUNDED);
            for (int i = 0; i < 50; i++) catalog.appendEvent(new Event(0, T0, "lifecycle", Optional.empty(), Map.of(), Optional.empty()));
            catalog.close();
            catalog = SqliteCatalog.open(dbFile, EventRetention.UNBOUNDED);
            assertThat(catalog.eventsAfter(0, Optional.empty(), Optional.empty(), 1000)).hasSize(50);
        }
    }

    private static SandboxQuery query(Optional<String> state, Map<String, String> metadata) {
        return new SandboxQuery(state, metadata, Optional.empty(), 100, Optional.empty());
    }

    /** Starts every task at once on its own virtual thread and returns their results in order. */
    private static List<Object> runConcurrently(List<Callable<Object>> tasks) throws InterruptedException, ExecutionException {
        var results = new ArrayList<Object>();
        try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
            var start = new CountDownLatch(1); // lines the threads up so they really overlap
            var futures = new ArrayList<Future<Object>>();
            for (var task : tasks) {
                futures.add(pool.submit(() -> {
                    start.await();
                    return task.call();
                }));
            }
            start.countDown();
            for (var f : futures) results.add(f.get());
        }
        return results;
    }
}
