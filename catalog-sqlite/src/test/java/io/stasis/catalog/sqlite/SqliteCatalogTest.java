package io.stasis.catalog.sqlite;

import static io.stasis.catalog.sqlite.TestSandboxes.T0;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.auth.ApiKey;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxQuery;
import io.stasis.core.sandbox.SandboxState;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
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
        var full = new Sandbox(SandboxId.random(), Optional.of("my-box.1"), "base",
                new SandboxState.Stopped("processes_lost"), Instant.parse("2026-01-02T03:04:05.987654321Z"),
                new Resources(2.5, 2048, 1000),
                Map.of("PATH", "/usr/bin", "EMPTY", "", "UNICODE", "héllo ✓ \"quoted\"\nline"),
                Map.of("owner", "alice", "team.name/x-y", "infra", "json", "{\"not\":\"parsed\"}"));
        var minimal = new Sandbox(SandboxId.random(), Optional.empty(), "tiny", SandboxState.RUNNING,
                Instant.EPOCH, Resources.DEFAULT, Map.of(), Map.of());
        var deleted = minimal.withState(SandboxState.DELETED);
        var deletedOther = new Sandbox(SandboxId.random(), Optional.empty(), "tiny", SandboxState.DELETED,
                T0, Resources.DEFAULT, Map.of(), Map.of());

        catalog.insert(full);
        catalog.insert(minimal);
        catalog.insert(deletedOther);

        assertThat(catalog.find(full.id())).contains(full);
        assertThat(catalog.findByName("my-box.1")).contains(full);
        assertThat(catalog.find(minimal.id())).contains(minimal);
        assertThat(catalog.find(deletedOther.id())).contains(deletedOther);
        catalog.update(deleted);
        assertThat(catalog.find(minimal.id())).contains(deleted);
    }

    @Test
    void findsNothingForUnknownIdsAndNames() {
        assertThat(catalog.find(SandboxId.random())).isEmpty();
        assertThat(catalog.findByName("nobody")).isEmpty();
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
        var renamed = new Sandbox(b.id(), Optional.of("a"), b.template(), b.state(), b.createdAt(), b.resources(), b.env(), b.metadata());

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
        var after = new Sandbox(before.id(), Optional.empty(), "base", new SandboxState.Stopped("idle"),
                T0.plusSeconds(5), new Resources(0.5, 256, 64), Map.of("A", "1"), Map.of("k", "v"));

        catalog.update(after);

        assertThat(catalog.find(before.id())).contains(after);
        assertThat(catalog.findByName("old")).isEmpty();
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
            var page = catalog.list(new SandboxQuery(Optional.empty(), Map.of(), cursor, 100));
            pages.add(page.items());
            cursor = page.nextCursor();
        } while (cursor.isPresent());

        assertThat(pages).extracting(List::size).containsExactly(100, 100, 50);
        assertThat(pages.stream().flatMap(List::stream).toList()).containsExactlyElementsOf(inserted);
    }

    @Test
    void aFullLastPageHasNoNextCursor() {
        for (int i = 0; i < 4; i++) catalog.insert(TestSandboxes.running(T0.plusSeconds(i)));

        var first = catalog.list(new SandboxQuery(Optional.empty(), Map.of(), Optional.empty(), 2));
        var second = catalog.list(new SandboxQuery(Optional.empty(), Map.of(), first.nextCursor(), 2));

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

        var first = catalog.list(new SandboxQuery(Optional.empty(), Map.of(), Optional.empty(), 2));
        catalog.delete(sandboxes.get(1).id());
        var rest = catalog.list(new SandboxQuery(Optional.empty(), Map.of(), first.nextCursor(), 10));

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
            var page = catalog.list(new SandboxQuery(Optional.of("running"), Map.of("parity", "even"), cursor, 4));
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
            assertThatThrownBy(() -> catalog.list(new SandboxQuery(Optional.empty(), Map.of(), Optional.of(garbage), 10)))
                    .as("cursor '%s'", garbage)
                    .isInstanceOfSatisfying(StasisException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.INVALID_REQUEST);
                        assertThat(e.details()).containsEntry("field", "cursor");
                    });
        }
    }

    @Test
    void reopeningTheFileKeepsEverything() {
        var s = new Sandbox(SandboxId.random(), Optional.of("keep"), "base", new SandboxState.Stopped("host_reboot"),
                T0, new Resources(4, 4096, 2048), Map.of("K", "v"), Map.of("m", "n"));
        var key = new ApiKey("key_0123456789abcdef", "ab".repeat(32), true, T0);
        catalog.insert(s);
        catalog.insertApiKey(key);
        catalog.close();

        catalog = SqliteCatalog.open(dbFile);

        assertThat(catalog.find(s.id())).contains(s);
        assertThat(catalog.findByName("keep")).contains(s);
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
        var plain = new ApiKey("key_aaaaaaaaaaaaaaaa", "11".repeat(32), false, T0);
        catalog.insertApiKey(plain);
        assertThat(catalog.hasRootKey()).isFalse();

        var root = new ApiKey("key_bbbbbbbbbbbbbbbb", "22".repeat(32), true, T0.plusSeconds(1));
        catalog.insertApiKey(root);

        assertThat(catalog.hasRootKey()).isTrue();
        assertThat(catalog.findApiKeyByHash(plain.secretHash())).contains(plain);
        assertThat(catalog.findApiKeyByHash(root.secretHash())).contains(root);
        assertThat(catalog.findApiKeyByHash("33".repeat(32))).isEmpty();
    }

    @Test
    void aDuplicateSecretHashIsRefused() {
        catalog.insertApiKey(new ApiKey("key_aaaaaaaaaaaaaaaa", "11".repeat(32), false, T0));
        assertThatThrownBy(() -> catalog.insertApiKey(new ApiKey("key_cccccccccccccccc", "11".repeat(32), true, T0)))
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

    private static SandboxQuery query(Optional<String> state, Map<String, String> metadata) {
        return new SandboxQuery(state, metadata, Optional.empty(), 100);
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
