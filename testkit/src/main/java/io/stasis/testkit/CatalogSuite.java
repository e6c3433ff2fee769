package io.stasis.testkit;

import static io.stasis.testkit.CatalogFixtures.T0;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.auth.ApiKey;
import io.stasis.core.auth.Permission;
import io.stasis.core.auth.ScopedToken;
import io.stasis.core.auth.TokenScope;
import io.stasis.core.blob.ManifestId;
import io.stasis.core.checkpoint.Checkpoint;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.checkpoint.CheckpointUpload;
import io.stasis.core.checkpoint.DurableImage;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.events.Event;
import io.stasis.core.journal.Operation;
import io.stasis.core.network.EgressPolicy;
import io.stasis.core.network.EgressRule;
import io.stasis.core.network.HeaderRule;
import io.stasis.core.network.NetworkPolicy;
import io.stasis.core.network.SandboxNetwork;
import io.stasis.core.policy.LifecyclePolicy;
import io.stasis.core.preview.Preview;
import io.stasis.core.preview.PreviewId;
import io.stasis.core.sandbox.Ids;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxQuery;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.secret.SealedSecret;
import io.stasis.core.spi.Catalog;
import io.stasis.core.tenant.Tenant;
import io.stasis.core.tenant.TenantId;
import io.stasis.core.tenant.TenantQuota;
import io.stasis.core.tenant.TenantUsage;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
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
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What every {@link Catalog} must do, as the SQLite catalog does it: records read back equal, the
 * errors it throws and the booleans it returns, the order of every list, paging, and what goes
 * with a deleted sandbox or tenant. A backend's test extends this and supplies a fresh, empty
 * catalog per test (only the default tenant in it); the suite closes it.
 */
public abstract class CatalogSuite {
    private static final Comparator<Sandbox> LIST_ORDER = Comparator.comparing(Sandbox::createdAt).thenComparing(Sandbox::id);
    /** After the default tenant's creation (a fresh catalog makes it as it opens). */
    private static final Instant LATER = Instant.now().plusSeconds(60);

    private Catalog catalog;

    /** A new, empty catalog for one test. */
    protected abstract Catalog newCatalog();

    protected Catalog catalog() {
        return catalog;
    }

    @BeforeEach
    void openCatalog() {
        catalog = newCatalog();
    }

    @AfterEach
    void closeCatalog() {
        catalog.close();
    }

    // --- sandboxes ---

    @Test
    void roundTripsEveryField() {
        var full = CatalogFixtures.sandbox(Optional.of("my-box.1"), "base",
                new SandboxState.Stopped("processes_lost"), Instant.parse("2026-01-02T03:04:05.987654321Z"),
                new Resources(2.5, 2048, 1000),
                Map.of("PATH", "/usr/bin", "EMPTY", "", "UNICODE", "héllo ✓ \"quoted\"\nline"),
                Map.of("owner", "alice", "team.name/x-y", "infra", "json", "{\"not\":\"parsed\"}"));
        var minimal = CatalogFixtures.sandbox(Optional.empty(), "tiny", SandboxState.RUNNING,
                Instant.EPOCH, Resources.DEFAULT, Map.of(), Map.of());
        var deleted = minimal.withState(SandboxState.DELETED);
        var deletedOther = CatalogFixtures.sandbox(Optional.empty(), "tiny", SandboxState.DELETED,
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
    void roundTripsEveryStateLineageAndLifecycle() {
        var paused = CatalogFixtures.running(T0).withState(SandboxState.PAUSED);
        var standby = CatalogFixtures.running(T0.plusMillis(500)).withState(SandboxState.STANDBY);
        var hibernated = CatalogFixtures.running(T0.plusSeconds(1)).withState(new SandboxState.Hibernated(
                CheckpointId.random(), 9_876_543_210L, Instant.parse("2026-03-01T12:34:56.000000001Z")));
        var emptyImage = CatalogFixtures.running(T0.plusSeconds(2)).withState(new SandboxState.Hibernated(CheckpointId.random(), 0, T0));
        var fork = CatalogFixtures.forkOf(paused.id(), CheckpointId.random(), T0.plusSeconds(3));
        var neverMoves = CatalogFixtures.running(T0.plusSeconds(4)).withLifecycle(new LifecyclePolicy(
                Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), false));
        var everyStep = CatalogFixtures.running(T0.plusSeconds(5)).withLifecycle(new LifecyclePolicy(
                Optional.of(Duration.ofMillis(1500)), Optional.of(Duration.ofSeconds(7)), Optional.of(Duration.ofNanos(1)), Optional.of(Duration.ofHours(25)),
                Optional.of(Duration.ofDays(999_999_999)), Optional.of(Duration.ofSeconds(59, 999_999_999)), true));
        var noReason = CatalogFixtures.running(T0.plusSeconds(6)).withState(new SandboxState.Stopped(null));
        var all = List.of(paused, standby, hibernated, emptyImage, fork, neverMoves, everyStep, noReason);

        all.forEach(catalog::insert);

        for (var s : all) assertThat(catalog.find(s.id())).as(s.toString()).contains(s);
        assertThat(catalog.all()).containsExactlyElementsOf(all);
    }

    @Test
    void findsNothingForUnknownIdsAndNames() {
        assertThat(catalog.find(SandboxId.random())).isEmpty();
        assertThat(catalog.findByName(TenantId.DEFAULT, "nobody")).isEmpty();
        assertThat(catalog.all()).isEmpty();
    }

    @Test
    void insertWithATakenNameIsNameTaken() {
        catalog.insert(CatalogFixtures.named("web"));

        assertThatThrownBy(() -> catalog.insert(CatalogFixtures.named("web")))
                .isInstanceOfSatisfying(StasisException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.NAME_TAKEN);
                    assertThat(e.details()).containsEntry("name", "web");
                });
        assertThat(catalog.all()).hasSize(1);
    }

    @Test
    void aSandboxBeingDeletedStillHoldsItsName() {
        var dying = CatalogFixtures.named("web").withState(SandboxState.DELETED);
        catalog.insert(dying);

        assertThat(catalog.findByName(TenantId.DEFAULT, "web")).contains(dying);
        assertThatThrownBy(() -> catalog.insert(CatalogFixtures.named("web")))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NAME_TAKEN));
    }

    @Test
    void unnamedSandboxesNeverCollide() {
        catalog.insert(CatalogFixtures.running(T0));
        catalog.insert(CatalogFixtures.running(T0));
        assertThat(catalog.all()).hasSize(2);
    }

    @Test
    void namesAreUniquePerTenant() {
        var a = insertTenant("a").id();
        var b = insertTenant("b").id();
        var webOfA = CatalogFixtures.inTenant(CatalogFixtures.named("web"), a);
        var webOfB = CatalogFixtures.inTenant(CatalogFixtures.named("web"), b);
        var webOfDefault = CatalogFixtures.named("web");
        catalog.insert(webOfA);
        catalog.insert(webOfB);
        catalog.insert(webOfDefault);

        assertThat(catalog.findByName(a, "web")).contains(webOfA);
        assertThat(catalog.findByName(b, "web")).contains(webOfB);
        assertThat(catalog.findByName(TenantId.DEFAULT, "web")).contains(webOfDefault);
        assertThat(catalog.findByName(TenantId.random(), "web")).isEmpty();

        assertThatThrownBy(() -> catalog.insert(CatalogFixtures.inTenant(CatalogFixtures.named("web"), a)))
                .isInstanceOfSatisfying(StasisException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.NAME_TAKEN);
                    assertThat(e.details()).containsEntry("name", "web");
                });
        // Renaming into a name the tenant already uses is refused too; one another tenant uses is fine.
        var other = CatalogFixtures.inTenant(CatalogFixtures.named("other"), a);
        catalog.insert(other);
        assertThatThrownBy(() -> catalog.update(CatalogFixtures.withName(other, Optional.of("web"))))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NAME_TAKEN));
        catalog.insert(CatalogFixtures.inTenant(CatalogFixtures.named("other"), b));
        assertThat(catalog.all()).hasSize(5);
    }

    @Test
    void updateToATakenNameIsNameTakenAndChangesNothing() {
        catalog.insert(CatalogFixtures.named("a"));
        var b = CatalogFixtures.named("b");
        catalog.insert(b);

        assertThatThrownBy(() -> catalog.update(CatalogFixtures.withName(b, Optional.of("a"))))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NAME_TAKEN));
        assertThat(catalog.find(b.id())).contains(b);
        catalog.update(b.withState(SandboxState.PAUSED)); // keeping its own name is no clash
        assertThat(catalog.findByName(TenantId.DEFAULT, "b")).contains(b.withState(SandboxState.PAUSED));
    }

    @Test
    void insertingTheSameIdTwiceIsInternal() {
        var s = CatalogFixtures.running(T0);
        catalog.insert(s);
        assertThatThrownBy(() -> catalog.insert(s.withState(SandboxState.PAUSED)))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL))
                .hasMessageContaining(s.id().value());
        assertThat(catalog.all()).containsExactly(s);
    }

    @Test
    void updateReplacesEveryField() {
        var before = CatalogFixtures.named("old");
        catalog.insert(before);
        var after = new Sandbox(before.id(), Optional.empty(), "base",
                new SandboxState.Hibernated(CheckpointId.random(), 123_456_789_012L, T0.plusSeconds(4)),
                T0.plusSeconds(5), new Resources(0.5, 256, 64, 128), Map.of("A", "1"), Map.of("k", "v"),
                Optional.of(SandboxId.random()), Optional.of(CheckpointId.random()),
                new LifecyclePolicy(Optional.empty(), Optional.of(Duration.ofSeconds(30)), Optional.of(Duration.ofMinutes(1)), Optional.empty(),
                        Optional.empty(), Optional.of(Duration.ofDays(2)), false), TenantId.random(), 42);

        catalog.update(after);

        assertThat(catalog.find(before.id())).contains(after);
        assertThat(catalog.findByName(TenantId.DEFAULT, "old")).isEmpty();
        catalog.insert(CatalogFixtures.named("old")); // the name is free again
    }

    @Test
    void updateMovesThroughEveryState() {
        var s = CatalogFixtures.running(T0);
        catalog.insert(s);
        var states = List.<SandboxState>of(SandboxState.PAUSED, SandboxState.STANDBY,
                new SandboxState.Hibernated(CheckpointId.random(), 42, T0.plusSeconds(1)),
                new SandboxState.Stopped("idle"), SandboxState.RUNNING,
                new SandboxState.Hibernated(CheckpointId.random(), 7, T0.plusSeconds(2)), SandboxState.DELETED);

        for (var state : states) {
            catalog.update(s.withState(state));
            assertThat(catalog.find(s.id())).contains(s.withState(state));
        }
    }

    @Test
    void updateOfAnUnknownSandboxIsNotFound() {
        var ghost = CatalogFixtures.running(T0);
        assertThatThrownBy(() -> catalog.update(ghost))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.SANDBOX_NOT_FOUND));
        assertThat(catalog.all()).isEmpty();
    }

    @Test
    void deleteIsIdempotentAndFreesTheName() {
        var s = CatalogFixtures.named("gone");
        catalog.insert(s);

        catalog.delete(s.id());
        catalog.delete(s.id());
        catalog.delete(SandboxId.random());

        assertThat(catalog.find(s.id())).isEmpty();
        assertThat(catalog.findByName(TenantId.DEFAULT, "gone")).isEmpty();
        assertThat(catalog.all()).isEmpty();
        catalog.insert(CatalogFixtures.named("gone"));
    }

    @Test
    void deleteTakesTheSandboxsOperationPreviewsNetworkTokensAndDurableImageAndKeepsItsCheckpointsUploadsAndEvents() {
        var s = CatalogFixtures.running(T0);
        var other = CatalogFixtures.running(T0.plusSeconds(1));
        catalog.insert(s);
        catalog.insert(other);
        var checkpoint = CatalogFixtures.checkpoint(s.id(), T0);
        catalog.insertCheckpoint(checkpoint);
        var upload = CheckpointUpload.pending(checkpoint.id(), T0);
        catalog.recordUpload(upload);
        catalog.beginOperation(new Operation(s.id(), Operation.Kind.STOP, Optional.empty(), T0));
        var otherOperation = new Operation(other.id(), Operation.Kind.PAUSE, Optional.empty(), T0);
        catalog.beginOperation(otherOperation);
        var preview = CatalogFixtures.privatePreview(s.id(), 8080, T0);
        var otherPreview = CatalogFixtures.privatePreview(other.id(), 8080, T0);
        catalog.insertPreview(preview);
        catalog.insertPreview(otherPreview);
        catalog.insertNetwork(new SandboxNetwork(s.id(), 0, policy()));
        var otherNetwork = new SandboxNetwork(other.id(), 1, policy());
        catalog.insertNetwork(otherNetwork);
        var token = CatalogFixtures.sandboxToken(TenantId.DEFAULT, s.id());
        var otherToken = CatalogFixtures.sandboxToken(TenantId.DEFAULT, other.id());
        catalog.insertToken(token);
        catalog.insertToken(otherToken);
        catalog.recordDurableImage(s.id(), new DurableImage(checkpoint.id(), "sha256:" + "a".repeat(64), T0));
        var event = catalog.appendEvent(new Event(0, T0, "lifecycle", Optional.of(s.id()), Map.of(), Optional.of(TenantId.DEFAULT)));

        catalog.delete(s.id());

        assertThat(catalog.find(s.id())).isEmpty();
        assertThat(catalog.pendingOperations()).containsExactly(otherOperation);
        assertThat(catalog.findPreview(preview.id())).isEmpty();
        assertThat(catalog.previewsOf(other.id())).containsExactly(otherPreview);
        assertThat(catalog.findNetwork(s.id())).isEmpty();
        assertThat(catalog.allNetworks()).containsExactly(otherNetwork);
        assertThat(catalog.findToken(token.id())).isEmpty();
        assertThat(catalog.tokensOf(TenantId.DEFAULT)).containsExactly(otherToken);
        assertThat(catalog.durableImage(s.id())).isEmpty();
        // A fork may start from a checkpoint of a deleted sandbox: checkpoints, their uploads and the history stay.
        assertThat(catalog.checkpointsOf(s.id())).containsExactly(checkpoint);
        assertThat(catalog.findCheckpoint(checkpoint.id())).contains(checkpoint);
        assertThat(catalog.findUpload(checkpoint.id())).contains(upload);
        assertThat(catalog.eventsAfter(0, Optional.of(s.id()), Optional.empty(), 10)).containsExactly(event);
        assertThat(catalog.find(other.id())).contains(other);
    }

    @Test
    void concurrentInsertsFromFiftyVirtualThreadsAllLand() throws Exception {
        var sandboxes = IntStream.range(0, 50).mapToObj(i -> CatalogFixtures.named("box-" + i)).toList();

        runConcurrently(sandboxes.stream().<Callable<Object>>map(s -> () -> {
            catalog.insert(s);
            return catalog.find(s.id()).orElseThrow();
        }).toList());

        assertThat(catalog.all()).containsExactlyInAnyOrderElementsOf(sandboxes);
    }

    @Test
    void concurrentInsertsOfOneNameLetExactlyOneWin() throws Exception {
        var contenders = IntStream.range(0, 50).mapToObj(i -> CatalogFixtures.named("contested")).toList();

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

    // --- listing ---

    @Test
    void pagesThroughEverySandboxInOrderWithoutGapsOrDuplicates() {
        var inserted = new ArrayList<Sandbox>();
        // Many sandboxes share a creation time, so the id must break ties consistently.
        for (int i = 0; i < 250; i++) {
            var s = CatalogFixtures.running(T0.plusNanos(i / 7));
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
        for (int i = 0; i < 4; i++) catalog.insert(CatalogFixtures.running(T0.plusSeconds(i)));

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
        var sandboxes = IntStream.range(0, 5).mapToObj(i -> CatalogFixtures.running(T0.plusSeconds(i))).toList();
        sandboxes.forEach(catalog::insert);

        var first = catalog.list(new SandboxQuery(Optional.empty(), Map.of(), Optional.empty(), 2, Optional.empty()));
        catalog.delete(sandboxes.get(1).id());
        var early = CatalogFixtures.running(T0.minusSeconds(1));
        catalog.insert(early); // before the cursor: not on later pages
        var rest = catalog.list(new SandboxQuery(Optional.empty(), Map.of(), first.nextCursor(), 10, Optional.empty()));

        assertThat(first.items()).containsExactlyElementsOf(sandboxes.subList(0, 2));
        assertThat(rest.items()).containsExactlyElementsOf(sandboxes.subList(2, 5));
    }

    @Test
    void filtersByState() {
        var running = CatalogFixtures.running(T0);
        var stopped = CatalogFixtures.running(T0.plusSeconds(1)).withState(new SandboxState.Stopped("idle"));
        var paused = CatalogFixtures.running(T0.plusSeconds(2)).withState(SandboxState.PAUSED);
        var hibernated = CatalogFixtures.running(T0.plusSeconds(3)).withState(new SandboxState.Hibernated(CheckpointId.random(), 1, T0));
        var standby = CatalogFixtures.running(T0.plusSeconds(4)).withState(SandboxState.STANDBY);
        var running2 = CatalogFixtures.running(T0.plusSeconds(5));
        List.of(running, stopped, paused, hibernated, standby, running2).forEach(catalog::insert);

        assertThat(catalog.list(query(Optional.of("running"), Map.of())).items()).containsExactly(running, running2);
        assertThat(catalog.list(query(Optional.of("stopped"), Map.of())).items()).containsExactly(stopped);
        assertThat(catalog.list(query(Optional.of("paused"), Map.of())).items()).containsExactly(paused);
        assertThat(catalog.list(query(Optional.of("hibernated"), Map.of())).items()).containsExactly(hibernated);
        assertThat(catalog.list(query(Optional.of("standby"), Map.of())).items()).containsExactly(standby);
    }

    @Test
    void listHidesSandboxesBeingDeletedButAllShowsThem() {
        var live = CatalogFixtures.running(T0);
        var dying = CatalogFixtures.running(T0.plusSeconds(1)).withState(SandboxState.DELETED);
        catalog.insert(live);
        catalog.insert(dying);

        assertThat(catalog.list(SandboxQuery.all()).items()).containsExactly(live);
        assertThat(catalog.all()).containsExactly(live, dying);
    }

    @Test
    void filtersByMetadataRequiringEveryEntry() {
        var aliceWeb = CatalogFixtures.withMetadata(T0, Map.of("owner", "alice", "app.kind/x", "web"));
        var aliceDb = CatalogFixtures.withMetadata(T0.plusSeconds(1), Map.of("owner", "alice", "app.kind/x", "db"));
        var bob = CatalogFixtures.withMetadata(T0.plusSeconds(2), Map.of("owner", "bob", "app.kind/x", "web"));
        var none = CatalogFixtures.running(T0.plusSeconds(3));
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
            var s = CatalogFixtures.withMetadata(T0.plusMillis(i), Map.of("parity", i % 2 == 0 ? "even" : "odd"));
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
    void listWithATenantShowsOnlyItsSandboxesPageByPage() {
        var a = insertTenant("a").id();
        var b = insertTenant("b").id();
        var ofA = new ArrayList<Sandbox>();
        var everyone = new ArrayList<Sandbox>();
        for (int i = 0; i < 12; i++) {
            var tenant = switch (i % 3) {
                case 0 -> a;
                case 1 -> b;
                default -> TenantId.DEFAULT;
            };
            var s = CatalogFixtures.ofTenant(tenant, SandboxState.RUNNING, 1024, 100, T0.plusSeconds(i));
            catalog.insert(s);
            everyone.add(s);
            if (tenant.equals(a)) ofA.add(s);
        }
        // Being deleted: hidden from list as ever.
        catalog.insert(CatalogFixtures.ofTenant(a, SandboxState.DELETED, 1024, 100, T0.plusSeconds(20)));

        var seen = new ArrayList<Sandbox>();
        Optional<String> cursor = Optional.empty();
        do {
            var page = catalog.list(new SandboxQuery(Optional.empty(), Map.of(), cursor, 2, Optional.of(a)));
            seen.addAll(page.items());
            cursor = page.nextCursor();
        } while (cursor.isPresent());

        assertThat(seen).containsExactlyElementsOf(ofA);
        assertThat(catalog.list(new SandboxQuery(Optional.empty(), Map.of(), Optional.empty(), 100, Optional.of(TenantId.random()))).items())
                .isEmpty();
        assertThat(catalog.list(SandboxQuery.all()).items()).containsExactlyElementsOf(everyone);
        assertThat(catalog.list(new SandboxQuery(Optional.of("running"), Map.of(), Optional.empty(), 100, Optional.of(b))).items())
                .allSatisfy(s -> assertThat(s.tenant()).isEqualTo(b)).hasSize(4);
    }

    @Test
    void cursorsNotMadeByAPreviousPageAreInvalidRequests() {
        catalog.insert(CatalogFixtures.running(T0));
        var b64 = Base64.getUrlEncoder().withoutPadding();
        for (String garbage : List.of("", "!!!not base64!!!", "abc", b64.encodeToString("v1|x|y".getBytes(StandardCharsets.UTF_8)))) {
            assertThatThrownBy(() -> catalog.list(new SandboxQuery(Optional.empty(), Map.of(), Optional.of(garbage), 10, Optional.empty())))
                    .as("cursor '%s'", garbage)
                    .isInstanceOfSatisfying(StasisException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.INVALID_REQUEST);
                        assertThat(e.details()).containsEntry("field", "cursor");
                    });
        }
    }

    @Test
    void childrenAreTheForksOfOneParentOldestFirstEvenAfterItIsDeleted() {
        var parent = CatalogFixtures.running(T0);
        var other = CatalogFixtures.running(T0);
        var checkpoint = CheckpointId.random();
        var late = CatalogFixtures.forkOf(parent.id(), checkpoint, T0.plusSeconds(9));
        var early = CatalogFixtures.forkOf(parent.id(), checkpoint, T0.plusSeconds(1));
        // Two forks made in the same instant: the id breaks the tie, as in list().
        var tieA = CatalogFixtures.withId(CatalogFixtures.forkOf(parent.id(), CheckpointId.random(), T0.plusSeconds(5)),
                new SandboxId("sbx_aaaaaaaaaaaaaaaa"));
        var tieB = CatalogFixtures.withId(CatalogFixtures.forkOf(parent.id(), CheckpointId.random(), T0.plusSeconds(5)),
                new SandboxId("sbx_bbbbbbbbbbbbbbbb"));
        var dying = CatalogFixtures.forkOf(parent.id(), checkpoint, T0.plusSeconds(10)).withState(SandboxState.DELETED);
        var nephew = CatalogFixtures.forkOf(other.id(), checkpoint, T0.plusSeconds(2));
        var grandchild = CatalogFixtures.forkOf(early.id(), CheckpointId.random(), T0.plusSeconds(3));
        List.of(parent, other, late, tieB, early, tieA, dying, nephew, grandchild).forEach(catalog::insert);

        assertThat(catalog.children(parent.id())).containsExactly(early, tieA, tieB, late, dying);
        assertThat(catalog.children(early.id())).containsExactly(grandchild);
        assertThat(catalog.children(late.id())).isEmpty();
        assertThat(catalog.children(SandboxId.random())).isEmpty();

        catalog.delete(parent.id());
        assertThat(catalog.children(parent.id())).containsExactly(early, tieA, tieB, late, dying);
        assertThat(catalog.find(early.id()).orElseThrow().parentId()).contains(parent.id());
    }

    // --- the operation journal ---

    @Test
    void completeOperationRecordsTheOutcomeAndEndsTheOperationTogether() {
        var s = CatalogFixtures.running(T0);
        var other = CatalogFixtures.running(T0);
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
    void completeWithoutAnOperationStillRecordsTheOutcome() {
        var s = CatalogFixtures.running(T0);
        catalog.insert(s);

        catalog.completeOperation(s.withState(SandboxState.PAUSED));

        assertThat(catalog.find(s.id())).contains(s.withState(SandboxState.PAUSED));
        assertThat(catalog.pendingOperations()).isEmpty();
    }

    @Test
    void aFailedCompleteChangesNeitherTheSandboxNorItsOperation() {
        catalog.insert(CatalogFixtures.named("taken"));
        var s = CatalogFixtures.named("mine");
        catalog.insert(s);
        var op = new Operation(s.id(), Operation.Kind.STOP, Optional.empty(), T0);
        catalog.beginOperation(op);
        // The outcome cannot be written (its name is taken): the operation must not end either.
        var badOutcome = CatalogFixtures.withName(s.withState(new SandboxState.Stopped("asked")), Optional.of("taken"));

        assertThatThrownBy(() -> catalog.completeOperation(badOutcome))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NAME_TAKEN));

        assertThat(catalog.find(s.id())).contains(s);
        assertThat(catalog.pendingOperations()).containsExactly(op);
    }

    @Test
    void completingForAnUnknownSandboxIsNotFoundAndKeepsTheOperation() {
        var ghost = CatalogFixtures.running(T0);
        var op = new Operation(ghost.id(), Operation.Kind.FORK, Optional.of(CheckpointId.random()), T0);
        catalog.beginOperation(op); // an operation may be journaled before its sandbox's record exists

        assertThatThrownBy(() -> catalog.completeOperation(ghost))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.SANDBOX_NOT_FOUND));
        assertThat(catalog.all()).isEmpty();
        assertThat(catalog.pendingOperations()).containsExactly(op);
    }

    @Test
    void beginReplacesTheSandboxsOperation() {
        var s = CatalogFixtures.running(T0);
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
    void pendingOperationsOfEveryKindComeOldestFirst() {
        var expected = new ArrayList<Operation>();
        var kinds = Operation.Kind.values();
        for (int i = 0; i < kinds.length; i++) {
            // Started in reverse order of kind; two share an instant (the sandbox id breaks the tie).
            var checkpoint = i % 2 == 0 ? Optional.of(CheckpointId.random()) : Optional.<CheckpointId>empty();
            expected.add(new Operation(SandboxId.random(), kinds[i], checkpoint, T0.plusSeconds(Math.max(2, kinds.length - i))));
        }
        expected.forEach(catalog::beginOperation);

        expected.sort(Comparator.comparing(Operation::startedAt).thenComparing(Operation::sandbox));
        assertThat(catalog.pendingOperations()).containsExactlyElementsOf(expected);
    }

    // --- networks ---

    @Test
    void roundTripsAndUpdatesANetworkPolicyButNotItsSlot() {
        var sandbox = CatalogFixtures.running(T0);
        catalog.insert(sandbox);
        var network = new SandboxNetwork(sandbox.id(), 3, policy("example.com", "*.pypi.example", "192.0.2.0/24"));
        catalog.insertNetwork(network);
        assertThat(catalog.findNetwork(sandbox.id())).contains(network);

        var changed = network.withPolicy(new NetworkPolicy(EgressPolicy.ALLOW_ALL, List.of(HeaderRule.of("api.example.com",
                Map.of("Authorization", "Bearer {{secret:TOKEN}}"), "rules[0]"))));
        catalog.updateNetwork(changed);
        assertThat(catalog.findNetwork(sandbox.id())).contains(changed);
        assertThat(catalog.allNetworks()).containsExactly(changed);

        catalog.updateNetwork(new SandboxNetwork(sandbox.id(), 9, policy()));
        assertThat(catalog.findNetwork(sandbox.id())).contains(new SandboxNetwork(sandbox.id(), 3, policy()));
        catalog.updateNetwork(new SandboxNetwork(SandboxId.random(), 4, policy())); // nothing to update: nothing happens
        assertThat(catalog.allNetworks()).hasSize(1);
    }

    @Test
    void aSlotIsHeldByOneSandboxAndFreedWithIt() {
        var a = CatalogFixtures.running(T0);
        var b = CatalogFixtures.running(T0.plusSeconds(1));
        catalog.insert(a);
        catalog.insert(b);
        catalog.insertNetwork(new SandboxNetwork(a.id(), 0, policy()));
        assertThatThrownBy(() -> catalog.insertNetwork(new SandboxNetwork(b.id(), 0, policy())))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL));
        assertThatThrownBy(() -> catalog.insertNetwork(new SandboxNetwork(a.id(), 1, policy())))
                .as("a sandbox has one network")
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL));
        assertThat(catalog.findNetwork(b.id())).isEmpty();

        catalog.delete(a.id());
        assertThat(catalog.findNetwork(a.id())).isEmpty();
        catalog.insertNetwork(new SandboxNetwork(b.id(), 0, policy()));
        assertThat(catalog.allNetworks()).extracting(SandboxNetwork::id).containsExactly(b.id());
        catalog.deleteNetwork(b.id());
        catalog.deleteNetwork(b.id());
        assertThat(catalog.allNetworks()).isEmpty();
    }

    @Test
    void allNetworksComeBySlotAndNeedNoSandboxRecord() {
        var seven = new SandboxNetwork(SandboxId.random(), 7, policy());
        var zero = new SandboxNetwork(SandboxId.random(), 0, policy("example.com"));
        var two = new SandboxNetwork(SandboxId.random(), 2, policy());
        List.of(seven, zero, two).forEach(catalog::insertNetwork); // recorded before the sandbox's own record

        assertThat(catalog.allNetworks()).containsExactly(zero, two, seven);
        assertThat(catalog.findNetwork(SandboxId.random())).isEmpty();
    }

    // --- checkpoints ---

    @Test
    void checkpointsRoundTripEveryField() {
        var sandbox = SandboxId.random();
        var named = new Checkpoint(CheckpointId.random(), sandbox, Optional.of("before upgrade ✓"), true,
                Checkpoint.Purpose.USER, 5_000_000_000L, Instant.parse("2026-01-02T03:04:05.000000007Z"));
        var hibernation = new Checkpoint(CheckpointId.random(), sandbox, Optional.empty(), true,
                Checkpoint.Purpose.HIBERNATION, 1, T0);
        var rootOnly = new Checkpoint(CheckpointId.random(), sandbox, Optional.empty(), false,
                Checkpoint.Purpose.FORK, 0, Instant.EPOCH);
        var all = new ArrayList<Checkpoint>(List.of(named, hibernation, rootOnly));
        for (var purpose : Checkpoint.Purpose.values())
            all.add(new Checkpoint(CheckpointId.random(), sandbox, Optional.empty(), false, purpose, 2, T0.plusSeconds(1)));

        all.forEach(catalog::insertCheckpoint);

        for (var c : all) assertThat(catalog.findCheckpoint(c.id())).contains(c);
        assertThat(catalog.findCheckpoint(CheckpointId.random())).isEmpty();
    }

    @Test
    void listsOneSandboxsCheckpointsOrAllOldestFirst() {
        var a = SandboxId.random();
        var b = SandboxId.random();
        var a3 = CatalogFixtures.checkpoint(a, T0.plusSeconds(3));
        var a1 = CatalogFixtures.checkpoint(a, T0.plusSeconds(1));
        // Same instant: ordered by id (fixed ids, so that the order does not depend on random ones).
        var b2 = CatalogFixtures.checkpoint("ckpt_3333333333333333", b, T0.plusSeconds(2));
        var tie1 = CatalogFixtures.checkpoint("ckpt_1111111111111111", a, T0.plusSeconds(2));
        var tie2 = CatalogFixtures.checkpoint("ckpt_2222222222222222", a, T0.plusSeconds(2));
        for (var c : List.of(a3, tie2, b2, a1, tie1)) catalog.insertCheckpoint(c);

        assertThat(catalog.checkpointsOf(a)).containsExactly(a1, tie1, tie2, a3);
        assertThat(catalog.checkpointsOf(b)).containsExactly(b2);
        assertThat(catalog.checkpointsOf(SandboxId.random())).isEmpty();
        assertThat(catalog.allCheckpoints()).containsExactly(a1, tie1, tie2, b2, a3);
    }

    @Test
    void checkpointNamesNeedNotBeUnique() {
        var s = SandboxId.random();
        var first = new Checkpoint(CheckpointId.random(), s, Optional.of("same"), true, Checkpoint.Purpose.USER, 1, T0);
        var second = new Checkpoint(CheckpointId.random(), s, Optional.of("same"), true, Checkpoint.Purpose.USER, 2, T0.plusSeconds(1));
        catalog.insertCheckpoint(first);
        catalog.insertCheckpoint(second);
        assertThat(catalog.checkpointsOf(s)).containsExactly(first, second);
    }

    @Test
    void aDuplicateCheckpointIdIsInternalAndKeepsTheFirst() {
        var c = CatalogFixtures.checkpoint(SandboxId.random(), T0);
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
    void deleteCheckpointIsIdempotentAndTouchesOnlyThatCheckpoint() {
        var s = SandboxId.random();
        var gone = CatalogFixtures.checkpoint(s, T0);
        var kept = CatalogFixtures.checkpoint(s, T0.plusSeconds(1));
        catalog.insertCheckpoint(gone);
        catalog.insertCheckpoint(kept);

        catalog.deleteCheckpoint(gone.id());
        catalog.deleteCheckpoint(gone.id());
        catalog.deleteCheckpoint(CheckpointId.random());

        assertThat(catalog.findCheckpoint(gone.id())).isEmpty();
        assertThat(catalog.allCheckpoints()).containsExactly(kept);
    }

    @Test
    void sparesAreKeptPerCheckpointListedOldestFirstAndGoWithIt() {
        var s = SandboxId.random();
        var late = CatalogFixtures.checkpoint(s, T0.plusSeconds(2));
        var early = CatalogFixtures.checkpoint(s, T0);
        var none = CatalogFixtures.checkpoint(s, T0.plusSeconds(1));
        List.of(late, early, none).forEach(catalog::insertCheckpoint);
        assertThat(catalog.checkpointSpares()).isEmpty();

        catalog.setCheckpointSpares(late.id(), 2);
        catalog.setCheckpointSpares(early.id(), 5);
        catalog.setCheckpointSpares(CheckpointId.random(), 3); // gone: nothing to record
        assertThat(catalog.checkpointSpares()).containsExactly(Map.entry(early.id(), 5), Map.entry(late.id(), 2));
        assertThat(catalog.findCheckpoint(early.id())).as("spares are not part of the record").contains(early);

        catalog.setCheckpointSpares(early.id(), 1);
        catalog.setCheckpointSpares(late.id(), 0);
        assertThat(catalog.checkpointSpares()).containsExactly(Map.entry(early.id(), 1));
        assertThatThrownBy(() -> catalog.setCheckpointSpares(early.id(), -1))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL));
        assertThat(catalog.checkpointSpares()).containsExactly(Map.entry(early.id(), 1));

        catalog.deleteCheckpoint(early.id());
        assertThat(catalog.checkpointSpares()).isEmpty();
        catalog.insertCheckpoint(early);
        assertThat(catalog.checkpointSpares()).as("a checkpoint starts with none").isEmpty();
    }

    // --- uploads and durable images ---

    @Test
    void uploadsRoundTripAreReplacedListedByCheckpointIdAndOutliveTheirCheckpoint() {
        var checkpoint = CatalogFixtures.checkpoint(SandboxId.random(), T0);
        catalog.insertCheckpoint(checkpoint);
        assertThat(catalog.findUpload(checkpoint.id())).isEmpty();
        var pending = CheckpointUpload.pending(checkpoint.id(), T0);
        catalog.recordUpload(pending);
        assertThat(catalog.findUpload(checkpoint.id())).contains(pending);

        var durable = new CheckpointUpload(checkpoint.id(), CheckpointUpload.State.DURABLE, Optional.of(CheckpointId.random()),
                Optional.of(manifest('a')), Optional.of(manifest('b')), 5_000_000_000L, 1234, Optional.empty(), T0.plusSeconds(9));
        catalog.recordUpload(durable);
        assertThat(catalog.findUpload(checkpoint.id())).contains(durable);

        var failed = new CheckpointUpload(new CheckpointId("ckpt_0000000000000000"), CheckpointUpload.State.FAILED, Optional.empty(),
                Optional.of(manifest('c')), Optional.empty(), 10, 0, Optional.of("the store said no ✗"), T0.plusSeconds(20));
        var last = CheckpointUpload.pending(new CheckpointId("ckpt_ffffffffffffffff"), T0.minusSeconds(5));
        catalog.recordUpload(last);
        catalog.recordUpload(failed);
        assertThat(catalog.findUpload(failed.checkpoint())).contains(failed);
        var byId = new ArrayList<>(List.of(durable, failed, last));
        byId.sort(Comparator.comparing(CheckpointUpload::checkpoint));
        assertThat(catalog.allUploads()).containsExactlyElementsOf(byId);

        catalog.deleteCheckpoint(checkpoint.id());
        assertThat(catalog.findUpload(checkpoint.id())).as("the service removes it itself").contains(durable);
        catalog.deleteUpload(checkpoint.id());
        catalog.deleteUpload(checkpoint.id());
        catalog.deleteUpload(CheckpointId.random());
        assertThat(catalog.findUpload(checkpoint.id())).isEmpty();
        assertThat(catalog.allUploads()).containsExactly(failed, last);
    }

    @Test
    void theNewestDurableImageOfASandboxWinsWhateverOrderUploadsEndIn() {
        var sandbox = CatalogFixtures.running(T0);
        catalog.insert(sandbox);
        assertThat(catalog.durableImage(sandbox.id())).isEmpty();
        var older = new DurableImage(CheckpointId.random(), "sha256:" + "a".repeat(64), T0.plusSeconds(1));
        var newer = new DurableImage(CheckpointId.random(), "sha256:" + "b".repeat(64), T0.plusSeconds(2));
        catalog.recordDurableImage(sandbox.id(), newer);
        catalog.recordDurableImage(sandbox.id(), older);
        assertThat(catalog.durableImage(sandbox.id())).contains(newer);
        var sameInstant = new DurableImage(CheckpointId.random(), "sha256:" + "d".repeat(64), T0.plusSeconds(2));
        catalog.recordDurableImage(sandbox.id(), sameInstant);
        assertThat(catalog.durableImage(sandbox.id())).as("taken no earlier: kept").contains(sameInstant);
        var newest = new DurableImage(CheckpointId.random(), "sha256:" + "c".repeat(64), T0.plusSeconds(3));
        catalog.recordDurableImage(sandbox.id(), newest);
        assertThat(catalog.durableImage(sandbox.id())).contains(newest);
        catalog.update(sandbox.withState(SandboxState.PAUSED));
        assertThat(catalog.durableImage(sandbox.id())).as("a change of the sandbox's record keeps it").contains(newest);
        assertThat(catalog.durableImage(SandboxId.random())).isEmpty();
        catalog.delete(sandbox.id());
        assertThat(catalog.durableImage(sandbox.id())).as("forgotten with the sandbox").isEmpty();
    }

    // --- events ---

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
    void eventDataRoundTripsAsPlainJsonValues() {
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
    void smallerIntegersAndFloatsInEventDataComeBackAsLongsAndDoubles() {
        var appended = catalog.appendEvent(new Event(0, T0, "error", Optional.empty(),
                Map.of("int", 5, "short", (short) 6, "byte", (byte) 7, "float", 0.5f, "list", List.of(8), "map", Map.of("n", 9)),
                Optional.empty()));

        var expected = Map.<String, Object>of("int", 5L, "short", 6L, "byte", 7L, "float", 0.5, "list", List.of(8L), "map", Map.of("n", 9L));
        assertThat(appended.data()).isEqualTo(expected);
        assertThat(catalog.eventsAfter(0, Optional.empty(), Optional.empty(), 1).getFirst().data()).isEqualTo(expected);
    }

    @Test
    void eventDataJsonCannotHoldExactlyIsRefusedAndNothingIsStored() {
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
    void eventsFilterBySandboxAndStopAtTheLimit() {
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
    void aTenantSeesItsOwnEventsAndThoseOfNoSandboxInIdOrder() {
        var a = insertTenant("a").id();
        var b = insertTenant("b").id();
        var sandboxOfA = SandboxId.random();
        var sandboxOfB = SandboxId.random();
        var seenByA = new ArrayList<Event>();
        var everything = new ArrayList<Event>();
        for (int i = 0; i < 15; i++) {
            var event = switch (i % 3) {
                case 0 -> new Event(0, T0, "lifecycle", Optional.of(sandboxOfA), Map.of("i", (long) i), Optional.of(a));
                case 1 -> new Event(0, T0, "lifecycle", Optional.of(sandboxOfB), Map.of("i", (long) i), Optional.of(b));
                default -> new Event(0, T0, "error", Optional.empty(), Map.of("i", (long) i), Optional.empty());
            };
            var appended = catalog.appendEvent(event);
            everything.add(appended);
            if (appended.visibleTo(a)) seenByA.add(appended);
        }
        // About a sandbox whose tenant was unknown when it was recorded (its record already gone): nobody's.
        var orphan = catalog.appendEvent(new Event(0, T0, "network.denied", Optional.of(SandboxId.random()), Map.of(), Optional.empty()));
        assertThat(orphan.visibleTo(a)).isFalse();

        assertThat(catalog.eventsAfter(0, Optional.empty(), Optional.of(a), 100)).containsExactlyElementsOf(seenByA);
        assertThat(seenByA).extracting(Event::tenant).containsOnly(Optional.of(a), Optional.empty()).hasSize(10);
        assertThat(catalog.eventsAfter(0, Optional.empty(), Optional.of(a), 3)).containsExactlyElementsOf(seenByA.subList(0, 3));
        assertThat(catalog.eventsAfter(seenByA.get(3).id(), Optional.empty(), Optional.of(a), 100))
                .containsExactlyElementsOf(seenByA.subList(4, seenByA.size()));
        // A tenant with no events still sees those of no sandbox, and not the orphan.
        assertThat(catalog.eventsAfter(0, Optional.empty(), Optional.of(TenantId.random()), 100))
                .containsExactlyElementsOf(everything.stream().filter(e -> e.sandbox().isEmpty()).toList());
        // With a sandbox too: another tenant's sandbox shows nothing.
        assertThat(catalog.eventsAfter(0, Optional.of(sandboxOfA), Optional.of(a), 100))
                .containsExactlyElementsOf(seenByA.stream().filter(e -> e.sandbox().isPresent()).toList());
        assertThat(catalog.eventsAfter(0, Optional.of(sandboxOfB), Optional.of(a), 100)).isEmpty();
        everything.add(orphan);
        assertThat(catalog.eventsAfter(0, Optional.empty(), Optional.empty(), 100)).containsExactlyElementsOf(everything);
    }

    @Test
    void concurrentAppendsGetDistinctIdsInCommitOrder() throws Exception {
        var appended = runConcurrently(IntStream.range(0, 50).<Callable<Object>>mapToObj(i -> () ->
                catalog.appendEvent(new Event(0, T0, "lifecycle", Optional.empty(), Map.of("i", (long) i), Optional.empty()))).toList());

        var byId = appended.stream().map(Event.class::cast).sorted(Comparator.comparingLong(Event::id)).toList();
        assertThat(byId).extracting(Event::id).doesNotHaveDuplicates();
        assertThat(catalog.eventsAfter(0, Optional.empty(), Optional.empty(), 100)).containsExactlyElementsOf(byId);
    }

    // --- API keys ---

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
        catalog.deleteApiKey(root.id());
        assertThat(catalog.hasRootKey()).isFalse();
    }

    @Test
    void aDuplicateKeyIdOrSecretHashIsInternalAndStoresNothing() {
        catalog.insertApiKey(new ApiKey("key_aaaaaaaaaaaaaaaa", TenantId.DEFAULT, "11".repeat(32), false, T0));
        assertThatThrownBy(() -> catalog.insertApiKey(new ApiKey("key_cccccccccccccccc", TenantId.DEFAULT, "11".repeat(32), true, T0)))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL));
        assertThatThrownBy(() -> catalog.insertApiKey(new ApiKey("key_aaaaaaaaaaaaaaaa", TenantId.DEFAULT, "44".repeat(32), true, T0)))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL));
        assertThat(catalog.hasRootKey()).isFalse();
        assertThat(catalog.apiKeysOf(TenantId.DEFAULT)).hasSize(1);
    }

    @Test
    void eachTenantListsItsOwnKeysOldestFirst() {
        var a = insertTenant("a").id();
        var b = insertTenant("b").id();
        var aLate = CatalogFixtures.key(a, T0.plusSeconds(2));
        var aEarly = CatalogFixtures.key(a, T0);
        var bOnly = CatalogFixtures.key(b, T0.plusSeconds(1));
        List.of(aLate, bOnly, aEarly).forEach(catalog::insertApiKey);

        assertThat(catalog.apiKeysOf(a)).containsExactly(aEarly, aLate);
        assertThat(catalog.apiKeysOf(b)).containsExactly(bOnly);
        assertThat(catalog.apiKeysOf(TenantId.DEFAULT)).isEmpty();
        assertThat(catalog.findApiKeyByHash(bOnly.secretHash())).contains(bOnly);
        assertThat(catalog.hasRootKey()).isFalse();
    }

    @Test
    void deleteApiKeyForgetsOneKeyIdempotently() {
        var a = insertTenant("a").id();
        var gone = CatalogFixtures.key(a, T0);
        var kept = CatalogFixtures.key(a, T0.plusSeconds(1));
        catalog.insertApiKey(gone);
        catalog.insertApiKey(kept);

        catalog.deleteApiKey(gone.id());
        catalog.deleteApiKey(gone.id());
        catalog.deleteApiKey("key_" + Ids.randomSuffix());

        assertThat(catalog.findApiKeyByHash(gone.secretHash())).isEmpty();
        assertThat(catalog.apiKeysOf(a)).containsExactly(kept);
    }

    // --- tenants ---

    @Test
    void theDefaultTenantExistsFromTheStartUnlimited() {
        var found = catalog.findTenant(TenantId.DEFAULT).orElseThrow();
        assertThat(found.name()).isEqualTo("default");
        assertThat(found.quota()).isEqualTo(TenantQuota.UNLIMITED);
        assertThat(found.createdAt()).isBefore(LATER);
        assertThat(catalog.allTenants()).containsExactly(found);
    }

    @Test
    void tenantsAreFoundAndListedOldestFirst() {
        var defaultTenant = catalog.findTenant(TenantId.DEFAULT).orElseThrow();
        var limited = new Tenant(TenantId.random(), "acme", new TenantQuota(Optional.of(0), Optional.of(Long.MAX_VALUE), Optional.of(1L)),
                LATER.plusSeconds(2));
        var unlimited = CatalogFixtures.tenant("globex-2", LATER.plusNanos(1));
        var tieA = new Tenant(new TenantId("ten_aaaaaaaaaaaaaaaa"), "tie-a", TenantQuota.UNLIMITED, LATER.plusSeconds(1));
        var tieB = new Tenant(new TenantId("ten_bbbbbbbbbbbbbbbb"), "tie-b", TenantQuota.UNLIMITED, LATER.plusSeconds(1));
        List.of(limited, tieB, unlimited, tieA).forEach(catalog::insertTenant);

        assertThat(catalog.findTenant(limited.id())).contains(limited);
        assertThat(catalog.findTenant(unlimited.id())).contains(unlimited);
        assertThat(catalog.findTenant(TenantId.random())).isEmpty();
        assertThat(catalog.allTenants()).containsExactly(defaultTenant, unlimited, tieA, tieB, limited);
    }

    @Test
    void updateTenantReplacesTheQuotaOnly() {
        var t = new Tenant(TenantId.random(), "acme", new TenantQuota(Optional.of(3), Optional.empty(), Optional.of(100L)), LATER);
        catalog.insertTenant(t);

        var changed = t.withQuota(new TenantQuota(Optional.empty(), Optional.of(4096L), Optional.empty()));
        catalog.updateTenant(changed);
        assertThat(catalog.findTenant(t.id())).contains(changed);

        catalog.updateTenant(new Tenant(t.id(), "renamed", TenantQuota.UNLIMITED, LATER.plusSeconds(5)));
        assertThat(catalog.findTenant(t.id())).contains(t.withQuota(TenantQuota.UNLIMITED));
    }

    @Test
    void updatingAnUnknownTenantIsInternal() {
        var ghost = CatalogFixtures.tenant("ghost", LATER);
        assertThatThrownBy(() -> catalog.updateTenant(ghost))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL));
        assertThat(catalog.findTenant(ghost.id())).isEmpty();
    }

    @Test
    void aDuplicateTenantNameIsNameTakenAndADuplicateIdInternal() {
        var first = insertTenant("acme");

        for (String taken : List.of("acme", "default")) {
            var clash = CatalogFixtures.tenant(taken, LATER.plusSeconds(1));
            assertThatThrownBy(() -> catalog.insertTenant(clash)).as(taken)
                    .isInstanceOfSatisfying(StasisException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.NAME_TAKEN);
                        assertThat(e.details()).containsEntry("name", taken);
                    });
            assertThat(catalog.findTenant(clash.id())).isEmpty();
        }
        assertThatThrownBy(() -> catalog.insertTenant(new Tenant(first.id(), "other", TenantQuota.UNLIMITED, LATER)))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL));
        assertThat(catalog.allTenants()).extracting(Tenant::id).containsExactly(TenantId.DEFAULT, first.id());
        assertThat(catalog.findTenant(first.id())).contains(first);
    }

    @Test
    void deletingATenantIsRefusedWhileItHasASandboxAndThenRemovesItsKeysTokensAndSecretsOnly() {
        var doomed = insertTenant("doomed").id();
        var kept = insertTenant("kept").id();
        var sandbox = CatalogFixtures.ofTenant(doomed, SandboxState.RUNNING, 1024, 100, T0);
        var keptSandbox = CatalogFixtures.ofTenant(kept, SandboxState.RUNNING, 1024, 100, T0);
        catalog.insert(sandbox);
        catalog.insert(keptSandbox);
        var doomedKey = CatalogFixtures.key(doomed, T0);
        var keptKey = CatalogFixtures.key(kept, T0);
        var rootKey = new ApiKey("key_" + Ids.randomSuffix(), TenantId.DEFAULT, "ff".repeat(32), true, T0);
        List.of(doomedKey, keptKey, rootKey).forEach(catalog::insertApiKey);
        var doomedToken = CatalogFixtures.token(doomed, new TokenScope.Volume("vol_1"), T0, T0.plusSeconds(60));
        var keptToken = CatalogFixtures.sandboxToken(kept, keptSandbox.id());
        catalog.insertToken(doomedToken);
        catalog.insertToken(keptToken);
        var secret = new SealedSecret("TOKEN", T0, new byte[]{1});
        catalog.putSecret(doomed, secret);
        catalog.putSecret(kept, secret);
        catalog.putSecret(TenantId.DEFAULT, secret);

        assertThat(catalog.deleteTenantIfEmpty(doomed)).isFalse();
        assertThat(catalog.findTenant(doomed)).isPresent();
        assertThat(catalog.apiKeysOf(doomed)).containsExactly(doomedKey);
        assertThat(catalog.tokensOf(doomed)).containsExactly(doomedToken);
        assertThat(catalog.secretsOf(doomed)).containsExactly(secret);

        catalog.delete(sandbox.id());
        assertThat(catalog.deleteTenantIfEmpty(doomed)).isTrue();

        assertThat(catalog.findTenant(doomed)).isEmpty();
        assertThat(catalog.apiKeysOf(doomed)).isEmpty();
        assertThat(catalog.findApiKeyByHash(doomedKey.secretHash())).isEmpty();
        assertThat(catalog.tokensOf(doomed)).isEmpty();
        assertThat(catalog.findToken(doomedToken.id())).isEmpty();
        assertThat(catalog.secretsOf(doomed)).isEmpty();

        assertThat(catalog.findTenant(kept)).isPresent();
        assertThat(catalog.find(keptSandbox.id())).contains(keptSandbox);
        assertThat(catalog.apiKeysOf(kept)).containsExactly(keptKey);
        assertThat(catalog.apiKeysOf(TenantId.DEFAULT)).containsExactly(rootKey);
        assertThat(catalog.hasRootKey()).isTrue();
        assertThat(catalog.tokensOf(kept)).containsExactly(keptToken);
        assertThat(catalog.findSecret(kept, "TOKEN")).contains(secret);
        assertThat(catalog.findSecret(TenantId.DEFAULT, "TOKEN")).contains(secret);
    }

    @Test
    void aSandboxBeingDeletedStillKeepsItsTenant() {
        var t = insertTenant("t").id();
        catalog.insert(CatalogFixtures.ofTenant(t, SandboxState.DELETED, 1024, 100, T0));

        assertThat(catalog.deleteTenantIfEmpty(t)).isFalse();
        assertThat(catalog.findTenant(t)).isPresent();
    }

    @Test
    void anEmptyTenantGoesAtOnceAndTheDefaultNever() {
        var t = insertTenant("empty").id();
        assertThat(catalog.deleteTenantIfEmpty(t)).isTrue();
        assertThat(catalog.findTenant(t)).isEmpty();
        assertThat(catalog.deleteTenantIfEmpty(TenantId.DEFAULT)).isFalse();
        assertThat(catalog.allTenants()).extracting(Tenant::id).containsExactly(TenantId.DEFAULT);
        // Nothing holds an unknown tenant, so deleting it succeeds: there is nothing left of it.
        assertThat(catalog.deleteTenantIfEmpty(TenantId.random())).isTrue();
    }

    @Test
    void usageCountsRunningPausedAndStandbySandboxesAndTheirMemoryAndEverySandboxsDiskPerTenant() {
        var a = insertTenant("a").id();
        var b = insertTenant("b").id();
        catalog.insert(CatalogFixtures.ofTenant(a, SandboxState.RUNNING, 1024, 100, T0));
        catalog.insert(CatalogFixtures.ofTenant(a, SandboxState.PAUSED, 512, 100, T0));
        catalog.insert(CatalogFixtures.ofTenant(a, SandboxState.STANDBY, 256, 100, T0));
        catalog.insert(CatalogFixtures.ofTenant(a, new SandboxState.Hibernated(CheckpointId.random(), 1, T0), 4096, 100, T0));
        catalog.insert(CatalogFixtures.ofTenant(a, new SandboxState.Stopped("idle"), 8192, 100, T0));
        catalog.insert(CatalogFixtures.ofTenant(a, SandboxState.DELETED, 16384, 100, T0));
        catalog.insert(CatalogFixtures.ofTenant(b, SandboxState.RUNNING, 256, 70, T0));

        assertThat(catalog.usage(a)).isEqualTo(new TenantUsage(3, 1792, 5 * 100));
        assertThat(catalog.usage(b)).isEqualTo(new TenantUsage(1, 256, 70));
        assertThat(catalog.usage(TenantId.DEFAULT)).isEqualTo(TenantUsage.NONE);
        assertThat(catalog.usage(TenantId.random())).isEqualTo(TenantUsage.NONE);
    }

    @Test
    void usageFollowsStateChanges() {
        var a = insertTenant("a").id();
        var s = CatalogFixtures.ofTenant(a, SandboxState.RUNNING, 2048, 100, T0);
        catalog.insert(s);
        assertThat(catalog.usage(a)).isEqualTo(new TenantUsage(1, 2048, 100));

        catalog.update(s.withState(new SandboxState.Hibernated(CheckpointId.random(), 1, T0)));
        assertThat(catalog.usage(a)).as("a hibernated sandbox keeps its disk").isEqualTo(new TenantUsage(0, 0, 100));
        catalog.update(s.withState(SandboxState.RUNNING));
        assertThat(catalog.usage(a)).isEqualTo(new TenantUsage(1, 2048, 100));
        catalog.update(s.withState(SandboxState.DELETED));
        assertThat(catalog.usage(a)).as("being deleted: holds nothing").isEqualTo(TenantUsage.NONE);
        catalog.delete(s.id());
        assertThat(catalog.usage(a)).isEqualTo(TenantUsage.NONE);
    }

    // --- scoped tokens ---

    @Test
    void tokensRoundTripByHashIdAndTenant() {
        var a = insertTenant("a").id();
        var b = insertTenant("b").id();
        var sandbox = CatalogFixtures.ofTenant(a, SandboxState.RUNNING, 1024, 100, T0);
        catalog.insert(sandbox);
        var full = new ScopedToken("tok_" + Ids.randomSuffix(), a, "aa".repeat(32), Optional.of("ci agent ✓"),
                new TokenScope.Sandbox(sandbox.id()), Set.of(Permission.EXEC, Permission.FILES_READ, Permission.FILES_WRITE),
                Instant.parse("2026-03-01T12:00:00.000000001Z"), Instant.parse("2026-03-01T13:00:00.000000001Z"));
        var volume = new ScopedToken("tok_" + Ids.randomSuffix(), a, "bb".repeat(32), Optional.empty(),
                new TokenScope.Volume("vol_data"), Set.of(Permission.VOLUME_READ, Permission.VOLUME_WRITE), T0.minusSeconds(1), T0);
        var ofB = CatalogFixtures.sandboxToken(b, SandboxId.random());
        List.of(full, volume, ofB).forEach(catalog::insertToken);

        assertThat(catalog.findTokenByHash(full.secretHash())).contains(full);
        assertThat(catalog.findTokenByHash(volume.secretHash())).contains(volume);
        assertThat(catalog.findTokenByHash("cc".repeat(32))).isEmpty();
        assertThat(catalog.findToken(full.id())).contains(full);
        assertThat(catalog.findToken("tok_" + Ids.randomSuffix())).isEmpty();
        assertThat(catalog.tokensOf(a)).containsExactly(volume, full);
        assertThat(catalog.tokensOf(b)).containsExactly(ofB);
        assertThat(catalog.tokensOf(TenantId.DEFAULT)).isEmpty();
    }

    @Test
    void aDuplicateTokenIdOrSecretHashIsInternal() {
        var token = CatalogFixtures.sandboxToken(TenantId.DEFAULT, SandboxId.random());
        catalog.insertToken(token);
        var sameHash = new ScopedToken("tok_" + Ids.randomSuffix(), TenantId.DEFAULT, token.secretHash(), Optional.empty(), token.scope(),
                token.permissions(), T0, T0.plusSeconds(1));
        var sameId = new ScopedToken(token.id(), TenantId.DEFAULT, "dd".repeat(32), Optional.empty(), token.scope(),
                token.permissions(), T0, T0.plusSeconds(1));
        for (var clash : List.of(sameHash, sameId)) {
            assertThatThrownBy(() -> catalog.insertToken(clash))
                    .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL));
        }
        assertThat(catalog.tokensOf(TenantId.DEFAULT)).containsExactly(token);
    }

    @Test
    void deleteTokenForgetsOneTokenIdempotently() {
        var a = insertTenant("a").id();
        var gone = CatalogFixtures.sandboxToken(a, SandboxId.random());
        var kept = CatalogFixtures.sandboxToken(a, SandboxId.random());
        catalog.insertToken(gone);
        catalog.insertToken(kept);

        catalog.deleteToken(gone.id());
        catalog.deleteToken(gone.id());

        assertThat(catalog.findToken(gone.id())).isEmpty();
        assertThat(catalog.findTokenByHash(gone.secretHash())).isEmpty();
        assertThat(catalog.tokensOf(a)).hasSize(1).first().isEqualTo(kept);
    }

    @Test
    void deleteTokensExpiredBeforeKeepsThoseExpiringAtOrAfterThatInstant() {
        var a = insertTenant("a").id();
        var b = insertTenant("b").id();
        var scope = new TokenScope.Sandbox(SandboxId.random());
        var expired = CatalogFixtures.token(a, scope, T0.minusSeconds(10), T0.minusNanos(1));
        var expiredOfB = CatalogFixtures.token(b, scope, T0.minusSeconds(10), T0.minusSeconds(5));
        var expiringNow = CatalogFixtures.token(a, scope, T0.minusSeconds(9), T0);
        var live = CatalogFixtures.token(a, scope, T0.minusSeconds(8), T0.plusSeconds(60));
        List.of(expired, expiredOfB, expiringNow, live).forEach(catalog::insertToken);

        catalog.deleteTokensExpiredBefore(T0);

        assertThat(catalog.tokensOf(a)).containsExactly(expiringNow, live);
        assertThat(catalog.tokensOf(b)).isEmpty();
        assertThat(catalog.findTokenByHash(expired.secretHash())).isEmpty();
    }

    @Test
    void deletingASandboxRevokesTheTokensScopedToIt() {
        var a = insertTenant("a").id();
        var gone = CatalogFixtures.ofTenant(a, SandboxState.RUNNING, 1024, 100, T0);
        var kept = CatalogFixtures.ofTenant(a, SandboxState.RUNNING, 1024, 100, T0);
        catalog.insert(gone);
        catalog.insert(kept);
        var ofGone = CatalogFixtures.sandboxToken(a, gone.id());
        var alsoOfGone = CatalogFixtures.sandboxToken(a, gone.id());
        var ofKept = CatalogFixtures.sandboxToken(a, kept.id());
        // A volume that happens to carry the same id is another resource.
        var volume = CatalogFixtures.token(a, new TokenScope.Volume(gone.id().value()), T0, T0.plusSeconds(60));
        List.of(ofGone, alsoOfGone, ofKept, volume).forEach(catalog::insertToken);

        catalog.delete(gone.id());

        assertThat(catalog.findToken(ofGone.id())).isEmpty();
        assertThat(catalog.findTokenByHash(alsoOfGone.secretHash())).isEmpty();
        assertThat(catalog.tokensOf(a)).containsExactlyInAnyOrder(ofKept, volume);
    }

    // --- previews ---

    @Test
    void roundTripsPrivateAndPublicPreviewsOldestFirst() {
        var sandbox = CatalogFixtures.running(T0);
        catalog.insert(sandbox);
        var second = new Preview(PreviewId.random(), sandbox.id(), 65535, true, Optional.empty(), T0.plusNanos(1), Optional.empty());
        var first = CatalogFixtures.privatePreview(sandbox.id(), 1, T0);
        var tieA = new Preview(new PreviewId("prv_aaaaaaaaaaaaaaaa"), sandbox.id(), 80, true, Optional.empty(), T0.plusSeconds(1), Optional.empty());
        var tieB = new Preview(new PreviewId("prv_bbbbbbbbbbbbbbbb"), sandbox.id(), 81, true, Optional.empty(), T0.plusSeconds(1), Optional.empty());

        for (var p : List.of(second, tieB, first, tieA)) assertThat(catalog.insertPreview(p)).isTrue();

        assertThat(catalog.previewsOf(sandbox.id())).containsExactly(first, second, tieA, tieB);
        assertThat(catalog.findPreview(first.id())).contains(first);
        assertThat(catalog.findPreview(PreviewId.random())).isEmpty();
        assertThat(catalog.previewsOf(SandboxId.random())).isEmpty();
    }

    @Test
    void insertPreviewIsFalseForAMissingOrDeletingSandboxAndInternalForADuplicateId() {
        assertThat(catalog.insertPreview(CatalogFixtures.privatePreview(SandboxId.random(), 80, T0))).isFalse();

        var deleting = CatalogFixtures.running(T0);
        catalog.insert(deleting);
        catalog.update(deleting.withState(SandboxState.DELETED));
        assertThat(catalog.insertPreview(CatalogFixtures.privatePreview(deleting.id(), 80, T0))).isFalse();
        assertThat(catalog.previewsOf(deleting.id())).isEmpty();

        var live = CatalogFixtures.running(T0);
        catalog.insert(live);
        var preview = CatalogFixtures.privatePreview(live.id(), 80, T0);
        assertThat(catalog.insertPreview(preview)).isTrue();
        var sameId = new Preview(preview.id(), live.id(), 81, true, Optional.empty(), T0, Optional.empty());
        assertThatThrownBy(() -> catalog.insertPreview(sameId))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL));
        assertThat(catalog.previewsOf(live.id())).containsExactly(preview);
    }

    @Test
    void deletingASandboxDeletesItsPreviewsOnly() {
        var gone = CatalogFixtures.running(T0);
        var kept = CatalogFixtures.running(T0.plus(Duration.ofSeconds(1)));
        catalog.insert(gone);
        catalog.insert(kept);
        var goneOne = CatalogFixtures.privatePreview(gone.id(), 3000, T0);
        var keptOne = CatalogFixtures.privatePreview(kept.id(), 3000, T0);
        catalog.insertPreview(goneOne);
        catalog.insertPreview(keptOne);

        catalog.delete(gone.id());

        assertThat(catalog.findPreview(goneOne.id())).isEmpty();
        assertThat(catalog.previewsOf(kept.id())).containsExactly(keptOne);
    }

    @Test
    void deletePreviewIsIdempotent() {
        var sandbox = CatalogFixtures.running(T0);
        catalog.insert(sandbox);
        var preview = CatalogFixtures.privatePreview(sandbox.id(), 8080, T0);
        var kept = CatalogFixtures.privatePreview(sandbox.id(), 8081, T0.plusSeconds(1));
        catalog.insertPreview(preview);
        catalog.insertPreview(kept);

        catalog.deletePreview(preview.id());
        catalog.deletePreview(preview.id());
        catalog.deletePreview(PreviewId.random());

        assertThat(catalog.previewsOf(sandbox.id())).containsExactly(kept);
    }

    // --- secrets ---

    @Test
    void putSecretSaysWhetherItIsNewReplacesListsByNameAndDeletes() {
        byte[] sealed = "opaque-bytes".getBytes(StandardCharsets.UTF_8);
        assertThat(catalog.putSecret(TenantId.DEFAULT, new SealedSecret("B_TOKEN", T0, sealed))).isTrue();
        assertThat(catalog.putSecret(TenantId.DEFAULT, new SealedSecret("A_TOKEN", T0, sealed))).isTrue();
        var replaced = new SealedSecret("B_TOKEN", T0.plusSeconds(5), new byte[]{1, 2, 3});
        assertThat(catalog.putSecret(TenantId.DEFAULT, replaced)).isFalse();

        assertThat(catalog.findSecret(TenantId.DEFAULT, "B_TOKEN")).contains(replaced);
        assertThat(catalog.secretsOf(TenantId.DEFAULT)).extracting(SealedSecret::name).containsExactly("A_TOKEN", "B_TOKEN");
        assertThat(catalog.deleteSecret(TenantId.DEFAULT, "A_TOKEN")).isTrue();
        assertThat(catalog.deleteSecret(TenantId.DEFAULT, "A_TOKEN")).isFalse();
        assertThat(catalog.findSecret(TenantId.DEFAULT, "A_TOKEN")).isEmpty();
        assertThat(catalog.secretsOf(TenantId.DEFAULT)).containsExactly(replaced);
    }

    @Test
    void twoTenantsSecretsOfOneNameAreIndependent() {
        var a = insertTenant("a").id();
        var b = insertTenant("b").id();
        var ofA = new SealedSecret("TOKEN", T0, new byte[]{1, 1});
        var ofB = new SealedSecret("TOKEN", T0.plusSeconds(1), new byte[]{2, 2});

        assertThat(catalog.putSecret(a, ofA)).isTrue();
        assertThat(catalog.putSecret(b, ofB)).isTrue(); // new for b, though a has one of that name

        assertThat(catalog.findSecret(a, "TOKEN")).contains(ofA);
        assertThat(catalog.findSecret(b, "TOKEN")).contains(ofB);
        assertThat(catalog.findSecret(TenantId.DEFAULT, "TOKEN")).isEmpty();

        var replacedOfA = new SealedSecret("TOKEN", T0.plusSeconds(2), new byte[]{3});
        assertThat(catalog.putSecret(a, replacedOfA)).isFalse();
        assertThat(catalog.findSecret(a, "TOKEN")).contains(replacedOfA);
        assertThat(catalog.findSecret(b, "TOKEN")).contains(ofB);

        assertThat(catalog.deleteSecret(a, "TOKEN")).isTrue();
        assertThat(catalog.deleteSecret(a, "TOKEN")).isFalse();
        assertThat(catalog.secretsOf(a)).isEmpty();
        assertThat(catalog.secretsOf(b)).containsExactly(ofB);
    }

    // --- helpers ---

    private Tenant insertTenant(String name) {
        var t = CatalogFixtures.tenant(name, LATER);
        catalog.insertTenant(t);
        return t;
    }

    private static SandboxQuery query(Optional<String> state, Map<String, String> metadata) {
        return new SandboxQuery(state, metadata, Optional.empty(), 100, Optional.empty());
    }

    private static NetworkPolicy policy(String... allow) {
        return new NetworkPolicy(new EgressPolicy(EgressPolicy.Action.DENY,
                Arrays.stream(allow).map(a -> EgressRule.parse(a, "allow")).toList(), List.of(EgressRule.parse("10.9.0.0/16", "deny"))));
    }

    private static ManifestId manifest(char digit) {
        return ManifestId.parse(String.valueOf(digit).repeat(64));
    }

    /** Starts every task at once on its own virtual thread and returns their results in order. */
    static List<Object> runConcurrently(List<Callable<Object>> tasks) throws InterruptedException, ExecutionException {
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
