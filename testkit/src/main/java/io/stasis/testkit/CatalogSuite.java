package io.stasis.testkit;

import io.stasis.core.sandbox.RuntimeKind;
import static io.stasis.testkit.CatalogFixtures.T0;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxQuery;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.spi.Catalog;
import io.stasis.core.tenant.TenantId;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * What every {@link Catalog} must do with sandboxes, as the SQLite catalog does it: records read
 * back equal, the errors it throws, the order of lists and pages, the operation journal, networks
 * and previews, and what goes with a deleted sandbox. A backend's test extends this and supplies a
 * fresh, empty catalog per test (only the default tenant in it); the suite closes it. The rest of
 * the catalog has suites of its own: {@link CheckpointCatalogSuite}, {@link EventCatalogSuite},
 * {@link TenantCatalogSuite}, {@link VolumeCatalogSuite} and {@link BucketCatalogSuite}.
 */
public abstract class CatalogSuite extends CatalogSuiteBase<Catalog> {
    private static final Comparator<Sandbox> LIST_ORDER = Comparator.comparing(Sandbox::createdAt).thenComparing(Sandbox::id);

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

        catalog().insert(full);
        catalog().insert(minimal);
        catalog().insert(deletedOther);

        assertThat(catalog().find(full.id())).contains(full);
        assertThat(catalog().findByName(TenantId.DEFAULT, "my-box.1")).contains(full);
        assertThat(catalog().find(minimal.id())).contains(minimal);
        assertThat(catalog().find(deletedOther.id())).contains(deletedOther);
        catalog().update(deleted);
        assertThat(catalog().find(minimal.id())).contains(deleted);
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
                Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), false, Optional.empty()));
        var everyStep = CatalogFixtures.running(T0.plusSeconds(5)).withLifecycle(new LifecyclePolicy(
                Optional.of(Duration.ofMillis(1500)), Optional.of(Duration.ofSeconds(7)), Optional.of(Duration.ofNanos(1)), Optional.of(Duration.ofHours(25)),
                Optional.of(Duration.ofDays(999_999_999)), Optional.of(Duration.ofSeconds(59, 999_999_999)), true, Optional.empty()));
        var noReason = CatalogFixtures.running(T0.plusSeconds(6)).withState(new SandboxState.Stopped(null));
        var all = List.of(paused, standby, hibernated, emptyImage, fork, neverMoves, everyStep, noReason);

        all.forEach(catalog()::insert);

        for (var s : all) assertThat(catalog().find(s.id())).as(s.toString()).contains(s);
        assertThat(catalog().all()).containsExactlyElementsOf(all);
    }

    @Test
    void findsNothingForUnknownIdsAndNames() {
        assertThat(catalog().find(SandboxId.random())).isEmpty();
        assertThat(catalog().findByName(TenantId.DEFAULT, "nobody")).isEmpty();
        assertThat(catalog().all()).isEmpty();
    }

    @Test
    void insertWithATakenNameIsNameTaken() {
        catalog().insert(CatalogFixtures.named("web"));

        assertThatThrownBy(() -> catalog().insert(CatalogFixtures.named("web")))
                .isInstanceOfSatisfying(StasisException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.NAME_TAKEN);
                    assertThat(e.details()).containsEntry("name", "web");
                });
        assertThat(catalog().all()).hasSize(1);
    }

    @Test
    void aSandboxBeingDeletedStillHoldsItsName() {
        var dying = CatalogFixtures.named("web").withState(SandboxState.DELETED);
        catalog().insert(dying);

        assertThat(catalog().findByName(TenantId.DEFAULT, "web")).contains(dying);
        assertThatThrownBy(() -> catalog().insert(CatalogFixtures.named("web")))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NAME_TAKEN));
    }

    @Test
    void unnamedSandboxesNeverCollide() {
        catalog().insert(CatalogFixtures.running(T0));
        catalog().insert(CatalogFixtures.running(T0));
        assertThat(catalog().all()).hasSize(2);
    }

    @Test
    void namesAreUniquePerTenant() {
        var a = insertTenant("a").id();
        var b = insertTenant("b").id();
        var webOfA = CatalogFixtures.inTenant(CatalogFixtures.named("web"), a);
        var webOfB = CatalogFixtures.inTenant(CatalogFixtures.named("web"), b);
        var webOfDefault = CatalogFixtures.named("web");
        catalog().insert(webOfA);
        catalog().insert(webOfB);
        catalog().insert(webOfDefault);

        assertThat(catalog().findByName(a, "web")).contains(webOfA);
        assertThat(catalog().findByName(b, "web")).contains(webOfB);
        assertThat(catalog().findByName(TenantId.DEFAULT, "web")).contains(webOfDefault);
        assertThat(catalog().findByName(TenantId.random(), "web")).isEmpty();

        assertThatThrownBy(() -> catalog().insert(CatalogFixtures.inTenant(CatalogFixtures.named("web"), a)))
                .isInstanceOfSatisfying(StasisException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.NAME_TAKEN);
                    assertThat(e.details()).containsEntry("name", "web");
                });
        // Renaming into a name the tenant already uses is refused too; one another tenant uses is fine.
        var other = CatalogFixtures.inTenant(CatalogFixtures.named("other"), a);
        catalog().insert(other);
        assertThatThrownBy(() -> catalog().update(CatalogFixtures.withName(other, Optional.of("web"))))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NAME_TAKEN));
        catalog().insert(CatalogFixtures.inTenant(CatalogFixtures.named("other"), b));
        assertThat(catalog().all()).hasSize(5);
    }

    @Test
    void updateToATakenNameIsNameTakenAndChangesNothing() {
        catalog().insert(CatalogFixtures.named("a"));
        var b = CatalogFixtures.named("b");
        catalog().insert(b);

        assertThatThrownBy(() -> catalog().update(CatalogFixtures.withName(b, Optional.of("a"))))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NAME_TAKEN));
        assertThat(catalog().find(b.id())).contains(b);
        catalog().update(b.withState(SandboxState.PAUSED)); // keeping its own name is no clash
        assertThat(catalog().findByName(TenantId.DEFAULT, "b")).contains(b.withState(SandboxState.PAUSED));
    }

    @Test
    void insertingTheSameIdTwiceIsInternal() {
        var s = CatalogFixtures.running(T0);
        catalog().insert(s);
        assertThatThrownBy(() -> catalog().insert(s.withState(SandboxState.PAUSED)))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL))
                .hasMessageContaining(s.id().value());
        assertThat(catalog().all()).containsExactly(s);
    }

    @Test
    void updateReplacesEveryField() {
        var before = CatalogFixtures.named("old");
        catalog().insert(before);
        var after = new Sandbox(before.id(), Optional.empty(), "base",
                new SandboxState.Hibernated(CheckpointId.random(), 123_456_789_012L, T0.plusSeconds(4)),
                T0.plusSeconds(5), new Resources(0.5, 256, 64, 128), Map.of("A", "1"), Map.of("k", "v"),
                Optional.of(SandboxId.random()), Optional.of(CheckpointId.random()),
                new LifecyclePolicy(Optional.empty(), Optional.of(Duration.ofSeconds(30)), Optional.of(Duration.ofMinutes(1)), Optional.empty(),
                        Optional.empty(), Optional.of(Duration.ofDays(2)), false, Optional.empty()), TenantId.random(), 42, RuntimeKind.RUNC);

        catalog().update(after);

        assertThat(catalog().find(before.id())).contains(after);
        assertThat(catalog().findByName(TenantId.DEFAULT, "old")).isEmpty();
        catalog().insert(CatalogFixtures.named("old")); // the name is free again
    }

    @Test
    void updateMovesThroughEveryState() {
        var s = CatalogFixtures.running(T0);
        catalog().insert(s);
        var states = List.<SandboxState>of(SandboxState.PAUSED, SandboxState.STANDBY,
                new SandboxState.Hibernated(CheckpointId.random(), 42, T0.plusSeconds(1)),
                new SandboxState.Stopped("idle"), SandboxState.RUNNING,
                new SandboxState.Hibernated(CheckpointId.random(), 7, T0.plusSeconds(2)), SandboxState.DELETED);

        for (var state : states) {
            catalog().update(s.withState(state));
            assertThat(catalog().find(s.id())).contains(s.withState(state));
        }
    }

    @Test
    void updateOfAnUnknownSandboxIsNotFound() {
        var ghost = CatalogFixtures.running(T0);
        assertThatThrownBy(() -> catalog().update(ghost))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.SANDBOX_NOT_FOUND));
        assertThat(catalog().all()).isEmpty();
    }

    @Test
    void deleteIsIdempotentAndFreesTheName() {
        var s = CatalogFixtures.named("gone");
        catalog().insert(s);

        catalog().delete(s.id());
        catalog().delete(s.id());
        catalog().delete(SandboxId.random());

        assertThat(catalog().find(s.id())).isEmpty();
        assertThat(catalog().findByName(TenantId.DEFAULT, "gone")).isEmpty();
        assertThat(catalog().all()).isEmpty();
        catalog().insert(CatalogFixtures.named("gone"));
    }

    @Test
    void deleteTakesTheSandboxsOperationPreviewsNetworkTokensAndDurableImageAndKeepsItsCheckpointsUploadsAndEvents() {
        var s = CatalogFixtures.running(T0);
        var other = CatalogFixtures.running(T0.plusSeconds(1));
        catalog().insert(s);
        catalog().insert(other);
        var checkpoint = CatalogFixtures.checkpoint(s.id(), T0);
        catalog().insertCheckpoint(checkpoint);
        var upload = CheckpointUpload.pending(checkpoint.id(), T0);
        catalog().recordUpload(upload);
        catalog().beginOperation(new Operation(s.id(), Operation.Kind.STOP, Optional.empty(), T0));
        var otherOperation = new Operation(other.id(), Operation.Kind.PAUSE, Optional.empty(), T0);
        catalog().beginOperation(otherOperation);
        var preview = CatalogFixtures.privatePreview(s.id(), 8080, T0);
        var otherPreview = CatalogFixtures.privatePreview(other.id(), 8080, T0);
        catalog().insertPreview(preview);
        catalog().insertPreview(otherPreview);
        catalog().insertNetwork(new SandboxNetwork(s.id(), 0, policy()));
        var otherNetwork = new SandboxNetwork(other.id(), 1, policy());
        catalog().insertNetwork(otherNetwork);
        var token = CatalogFixtures.sandboxToken(TenantId.DEFAULT, s.id());
        var otherToken = CatalogFixtures.sandboxToken(TenantId.DEFAULT, other.id());
        catalog().insertToken(token);
        catalog().insertToken(otherToken);
        catalog().recordDurableImage(s.id(), new DurableImage(checkpoint.id(), "sha256:" + "a".repeat(64), T0));
        var event = catalog().appendEvent(new Event(0, T0, "lifecycle", Optional.of(s.id()), Map.of(), Optional.of(TenantId.DEFAULT)));

        catalog().delete(s.id());

        assertThat(catalog().find(s.id())).isEmpty();
        assertThat(catalog().pendingOperations()).containsExactly(otherOperation);
        assertThat(catalog().findPreview(preview.id())).isEmpty();
        assertThat(catalog().previewsOf(other.id())).containsExactly(otherPreview);
        assertThat(catalog().findNetwork(s.id())).isEmpty();
        assertThat(catalog().allNetworks()).containsExactly(otherNetwork);
        assertThat(catalog().findToken(token.id())).isEmpty();
        assertThat(catalog().tokensOf(TenantId.DEFAULT)).containsExactly(otherToken);
        assertThat(catalog().durableImage(s.id())).isEmpty();
        // A fork may start from a checkpoint of a deleted sandbox: checkpoints, their uploads and the history stay.
        assertThat(catalog().checkpointsOf(s.id())).containsExactly(checkpoint);
        assertThat(catalog().findCheckpoint(checkpoint.id())).contains(checkpoint);
        assertThat(catalog().findUpload(checkpoint.id())).contains(upload);
        assertThat(catalog().eventsAfter(0, Optional.of(s.id()), Optional.empty(), 10)).containsExactly(event);
        assertThat(catalog().find(other.id())).contains(other);
    }

    @Test
    void concurrentInsertsFromFiftyVirtualThreadsAllLand() throws Exception {
        var sandboxes = IntStream.range(0, 50).mapToObj(i -> CatalogFixtures.named("box-" + i)).toList();

        runConcurrently(sandboxes.stream().<Callable<Object>>map(s -> () -> {
            catalog().insert(s);
            return catalog().find(s.id()).orElseThrow();
        }).toList());

        assertThat(catalog().all()).containsExactlyInAnyOrderElementsOf(sandboxes);
    }

    @Test
    void concurrentInsertsOfOneNameLetExactlyOneWin() throws Exception {
        var contenders = IntStream.range(0, 50).mapToObj(i -> CatalogFixtures.named("contested")).toList();

        var outcomes = runConcurrently(contenders.stream().<Callable<Object>>map(s -> () -> {
            try {
                catalog().insert(s);
                return "won";
            } catch (StasisException e) {
                return e.code();
            }
        }).toList());

        assertThat(outcomes).filteredOn("won"::equals).hasSize(1);
        assertThat(outcomes).filteredOn(ErrorCode.NAME_TAKEN::equals).hasSize(49);
        assertThat(catalog().all()).hasSize(1);
    }

    @Test
    void aClosedCatalogRefusesCallsAndClosesTwiceQuietly() {
        catalog().close();
        catalog().close();
        assertThatThrownBy(() -> catalog().all())
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
            catalog().insert(s);
            inserted.add(s);
        }
        inserted.sort(LIST_ORDER);

        var pages = new ArrayList<List<Sandbox>>();
        Optional<String> cursor = Optional.empty();
        do {
            var page = catalog().list(new SandboxQuery(Optional.empty(), Map.of(), cursor, 100, Optional.empty()));
            pages.add(page.items());
            cursor = page.nextCursor();
        } while (cursor.isPresent());

        assertThat(pages).extracting(List::size).containsExactly(100, 100, 50);
        assertThat(pages.stream().flatMap(List::stream).toList()).containsExactlyElementsOf(inserted);
    }

    @Test
    void aFullLastPageHasNoNextCursor() {
        for (int i = 0; i < 4; i++) catalog().insert(CatalogFixtures.running(T0.plusSeconds(i)));

        var first = catalog().list(new SandboxQuery(Optional.empty(), Map.of(), Optional.empty(), 2, Optional.empty()));
        var second = catalog().list(new SandboxQuery(Optional.empty(), Map.of(), first.nextCursor(), 2, Optional.empty()));

        assertThat(first.nextCursor()).isPresent();
        assertThat(second.items()).hasSize(2);
        assertThat(second.nextCursor()).isEmpty();
    }

    @Test
    void emptyCatalogListsNothing() {
        var page = catalog().list(SandboxQuery.all());
        assertThat(page.items()).isEmpty();
        assertThat(page.nextCursor()).isEmpty();
    }

    @Test
    void pagingContinuesAfterTheCursorEvenIfItsSandboxWasDeleted() {
        var sandboxes = IntStream.range(0, 5).mapToObj(i -> CatalogFixtures.running(T0.plusSeconds(i))).toList();
        sandboxes.forEach(catalog()::insert);

        var first = catalog().list(new SandboxQuery(Optional.empty(), Map.of(), Optional.empty(), 2, Optional.empty()));
        catalog().delete(sandboxes.get(1).id());
        var early = CatalogFixtures.running(T0.minusSeconds(1));
        catalog().insert(early); // before the cursor: not on later pages
        var rest = catalog().list(new SandboxQuery(Optional.empty(), Map.of(), first.nextCursor(), 10, Optional.empty()));

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
        List.of(running, stopped, paused, hibernated, standby, running2).forEach(catalog()::insert);

        assertThat(catalog().list(query(Optional.of("running"), Map.of())).items()).containsExactly(running, running2);
        assertThat(catalog().list(query(Optional.of("stopped"), Map.of())).items()).containsExactly(stopped);
        assertThat(catalog().list(query(Optional.of("paused"), Map.of())).items()).containsExactly(paused);
        assertThat(catalog().list(query(Optional.of("hibernated"), Map.of())).items()).containsExactly(hibernated);
        assertThat(catalog().list(query(Optional.of("standby"), Map.of())).items()).containsExactly(standby);
    }

    @Test
    void listHidesSandboxesBeingDeletedButAllShowsThem() {
        var live = CatalogFixtures.running(T0);
        var dying = CatalogFixtures.running(T0.plusSeconds(1)).withState(SandboxState.DELETED);
        catalog().insert(live);
        catalog().insert(dying);

        assertThat(catalog().list(SandboxQuery.all()).items()).containsExactly(live);
        assertThat(catalog().all()).containsExactly(live, dying);
    }

    @Test
    void filtersByMetadataRequiringEveryEntry() {
        var aliceWeb = CatalogFixtures.withMetadata(T0, Map.of("owner", "alice", "app.kind/x", "web"));
        var aliceDb = CatalogFixtures.withMetadata(T0.plusSeconds(1), Map.of("owner", "alice", "app.kind/x", "db"));
        var bob = CatalogFixtures.withMetadata(T0.plusSeconds(2), Map.of("owner", "bob", "app.kind/x", "web"));
        var none = CatalogFixtures.running(T0.plusSeconds(3));
        List.of(aliceWeb, aliceDb, bob, none).forEach(catalog()::insert);

        assertThat(catalog().list(query(Optional.empty(), Map.of("owner", "alice"))).items()).containsExactly(aliceWeb, aliceDb);
        assertThat(catalog().list(query(Optional.empty(), Map.of("app.kind/x", "web"))).items()).containsExactly(aliceWeb, bob);
        assertThat(catalog().list(query(Optional.empty(), Map.of("owner", "alice", "app.kind/x", "web"))).items()).containsExactly(aliceWeb);
        assertThat(catalog().list(query(Optional.empty(), Map.of("owner", "carol"))).items()).isEmpty();
        assertThat(catalog().list(query(Optional.empty(), Map.of("$.owner", "alice"))).items()).isEmpty();
        assertThat(catalog().list(query(Optional.of("stopped"), Map.of("owner", "alice"))).items()).isEmpty();
    }

    @Test
    void filtersAndCursorsCombine() {
        var expected = new ArrayList<Sandbox>();
        for (int i = 0; i < 30; i++) {
            var s = CatalogFixtures.withMetadata(T0.plusMillis(i), Map.of("parity", i % 2 == 0 ? "even" : "odd"));
            catalog().insert(s);
            if (i % 2 == 0) expected.add(s);
        }
        var seen = new ArrayList<Sandbox>();
        Optional<String> cursor = Optional.empty();
        do {
            var page = catalog().list(new SandboxQuery(Optional.of("running"), Map.of("parity", "even"), cursor, 4, Optional.empty()));
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
            catalog().insert(s);
            everyone.add(s);
            if (tenant.equals(a)) ofA.add(s);
        }
        // Being deleted: hidden from list as ever.
        catalog().insert(CatalogFixtures.ofTenant(a, SandboxState.DELETED, 1024, 100, T0.plusSeconds(20)));

        var seen = new ArrayList<Sandbox>();
        Optional<String> cursor = Optional.empty();
        do {
            var page = catalog().list(new SandboxQuery(Optional.empty(), Map.of(), cursor, 2, Optional.of(a)));
            seen.addAll(page.items());
            cursor = page.nextCursor();
        } while (cursor.isPresent());

        assertThat(seen).containsExactlyElementsOf(ofA);
        assertThat(catalog().list(new SandboxQuery(Optional.empty(), Map.of(), Optional.empty(), 100, Optional.of(TenantId.random()))).items())
                .isEmpty();
        assertThat(catalog().list(SandboxQuery.all()).items()).containsExactlyElementsOf(everyone);
        assertThat(catalog().list(new SandboxQuery(Optional.of("running"), Map.of(), Optional.empty(), 100, Optional.of(b))).items())
                .allSatisfy(s -> assertThat(s.tenant()).isEqualTo(b)).hasSize(4);
    }

    @Test
    void cursorsNotMadeByAPreviousPageAreInvalidRequests() {
        catalog().insert(CatalogFixtures.running(T0));
        var b64 = Base64.getUrlEncoder().withoutPadding();
        for (String garbage : List.of("", "!!!not base64!!!", "abc", b64.encodeToString("v1|x|y".getBytes(StandardCharsets.UTF_8)))) {
            assertThatThrownBy(() -> catalog().list(new SandboxQuery(Optional.empty(), Map.of(), Optional.of(garbage), 10, Optional.empty())))
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
        List.of(parent, other, late, tieB, early, tieA, dying, nephew, grandchild).forEach(catalog()::insert);

        assertThat(catalog().children(parent.id())).containsExactly(early, tieA, tieB, late, dying);
        assertThat(catalog().children(early.id())).containsExactly(grandchild);
        assertThat(catalog().children(late.id())).isEmpty();
        assertThat(catalog().children(SandboxId.random())).isEmpty();

        catalog().delete(parent.id());
        assertThat(catalog().children(parent.id())).containsExactly(early, tieA, tieB, late, dying);
        assertThat(catalog().find(early.id()).orElseThrow().parentId()).contains(parent.id());
    }

    // --- the operation journal ---

    @Test
    void completeOperationRecordsTheOutcomeAndEndsTheOperationTogether() {
        var s = CatalogFixtures.running(T0);
        var other = CatalogFixtures.running(T0);
        catalog().insert(s);
        catalog().insert(other);
        var image = CheckpointId.random();
        var otherOp = new Operation(other.id(), Operation.Kind.PAUSE, Optional.empty(), T0);
        catalog().beginOperation(new Operation(s.id(), Operation.Kind.HIBERNATE, Optional.of(image), T0.plusSeconds(1)));
        catalog().beginOperation(otherOp);
        var outcome = s.withState(new SandboxState.Hibernated(image, 1 << 20, T0.plusSeconds(2)));

        catalog().completeOperation(outcome);

        assertThat(catalog().find(s.id())).contains(outcome);
        assertThat(catalog().pendingOperations()).containsExactly(otherOp);
        assertThat(catalog().find(other.id())).contains(other);
    }

    @Test
    void completeWithoutAnOperationStillRecordsTheOutcome() {
        var s = CatalogFixtures.running(T0);
        catalog().insert(s);

        catalog().completeOperation(s.withState(SandboxState.PAUSED));

        assertThat(catalog().find(s.id())).contains(s.withState(SandboxState.PAUSED));
        assertThat(catalog().pendingOperations()).isEmpty();
    }

    @Test
    void aFailedCompleteChangesNeitherTheSandboxNorItsOperation() {
        catalog().insert(CatalogFixtures.named("taken"));
        var s = CatalogFixtures.named("mine");
        catalog().insert(s);
        var op = new Operation(s.id(), Operation.Kind.STOP, Optional.empty(), T0);
        catalog().beginOperation(op);
        // The outcome cannot be written (its name is taken): the operation must not end either.
        var badOutcome = CatalogFixtures.withName(s.withState(new SandboxState.Stopped("asked")), Optional.of("taken"));

        assertThatThrownBy(() -> catalog().completeOperation(badOutcome))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NAME_TAKEN));

        assertThat(catalog().find(s.id())).contains(s);
        assertThat(catalog().pendingOperations()).containsExactly(op);
    }

    @Test
    void completingForAnUnknownSandboxIsNotFoundAndKeepsTheOperation() {
        var ghost = CatalogFixtures.running(T0);
        var op = new Operation(ghost.id(), Operation.Kind.FORK, Optional.of(CheckpointId.random()), T0);
        catalog().beginOperation(op); // an operation may be journaled before its sandbox's record exists

        assertThatThrownBy(() -> catalog().completeOperation(ghost))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.SANDBOX_NOT_FOUND));
        assertThat(catalog().all()).isEmpty();
        assertThat(catalog().pendingOperations()).containsExactly(op);
    }

    @Test
    void beginReplacesTheSandboxsOperation() {
        var s = CatalogFixtures.running(T0);
        catalog().insert(s);
        catalog().beginOperation(new Operation(s.id(), Operation.Kind.CHECKPOINT, Optional.of(CheckpointId.random()), T0));
        var second = new Operation(s.id(), Operation.Kind.RESUME, Optional.empty(), T0.plusSeconds(1));

        catalog().beginOperation(second);

        assertThat(catalog().pendingOperations()).containsExactly(second);
    }

    @Test
    void abandonEndsOnlyThatOperationAndIsIdempotent() {
        var a = new Operation(SandboxId.random(), Operation.Kind.PAUSE, Optional.empty(), T0);
        var b = new Operation(SandboxId.random(), Operation.Kind.START, Optional.empty(), T0.plusSeconds(1));
        catalog().beginOperation(a);
        catalog().beginOperation(b);

        catalog().abandonOperation(a.sandbox());
        catalog().abandonOperation(a.sandbox());
        catalog().abandonOperation(SandboxId.random());

        assertThat(catalog().pendingOperations()).containsExactly(b);
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
        expected.forEach(catalog()::beginOperation);

        expected.sort(Comparator.comparing(Operation::startedAt).thenComparing(Operation::sandbox));
        assertThat(catalog().pendingOperations()).containsExactlyElementsOf(expected);
    }

    // --- networks ---

    @Test
    void roundTripsAndUpdatesANetworkPolicyButNotItsSlot() {
        var sandbox = CatalogFixtures.running(T0);
        catalog().insert(sandbox);
        var network = new SandboxNetwork(sandbox.id(), 3, policy("example.com", "*.pypi.example", "192.0.2.0/24"));
        catalog().insertNetwork(network);
        assertThat(catalog().findNetwork(sandbox.id())).contains(network);

        var changed = network.withPolicy(new NetworkPolicy(EgressPolicy.ALLOW_ALL, List.of(HeaderRule.of("api.example.com",
                Map.of("Authorization", "Bearer {{secret:TOKEN}}"), "rules[0]"))));
        catalog().updateNetwork(changed);
        assertThat(catalog().findNetwork(sandbox.id())).contains(changed);
        assertThat(catalog().allNetworks()).containsExactly(changed);

        catalog().updateNetwork(new SandboxNetwork(sandbox.id(), 9, policy()));
        assertThat(catalog().findNetwork(sandbox.id())).contains(new SandboxNetwork(sandbox.id(), 3, policy()));
        catalog().updateNetwork(new SandboxNetwork(SandboxId.random(), 4, policy())); // nothing to update: nothing happens
        assertThat(catalog().allNetworks()).hasSize(1);
    }

    @Test
    void aSlotIsHeldByOneSandboxAndFreedWithIt() {
        var a = CatalogFixtures.running(T0);
        var b = CatalogFixtures.running(T0.plusSeconds(1));
        catalog().insert(a);
        catalog().insert(b);
        catalog().insertNetwork(new SandboxNetwork(a.id(), 0, policy()));
        assertThatThrownBy(() -> catalog().insertNetwork(new SandboxNetwork(b.id(), 0, policy())))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL));
        assertThatThrownBy(() -> catalog().insertNetwork(new SandboxNetwork(a.id(), 1, policy())))
                .as("a sandbox has one network")
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL));
        assertThat(catalog().findNetwork(b.id())).isEmpty();

        catalog().delete(a.id());
        assertThat(catalog().findNetwork(a.id())).isEmpty();
        catalog().insertNetwork(new SandboxNetwork(b.id(), 0, policy()));
        assertThat(catalog().allNetworks()).extracting(SandboxNetwork::id).containsExactly(b.id());
        catalog().deleteNetwork(b.id());
        catalog().deleteNetwork(b.id());
        assertThat(catalog().allNetworks()).isEmpty();
    }

    @Test
    void allNetworksComeBySlotAndNeedNoSandboxRecord() {
        var seven = new SandboxNetwork(SandboxId.random(), 7, policy());
        var zero = new SandboxNetwork(SandboxId.random(), 0, policy("example.com"));
        var two = new SandboxNetwork(SandboxId.random(), 2, policy());
        List.of(seven, zero, two).forEach(catalog()::insertNetwork); // recorded before the sandbox's own record

        assertThat(catalog().allNetworks()).containsExactly(zero, two, seven);
        assertThat(catalog().findNetwork(SandboxId.random())).isEmpty();
    }

    // --- previews ---

    @Test
    void roundTripsPrivateAndPublicPreviewsOldestFirst() {
        var sandbox = CatalogFixtures.running(T0);
        catalog().insert(sandbox);
        var second = new Preview(PreviewId.random(), sandbox.id(), 65535, true, Optional.empty(), T0.plusNanos(1), Optional.empty());
        var first = CatalogFixtures.privatePreview(sandbox.id(), 1, T0);
        var tieA = new Preview(new PreviewId("prv_aaaaaaaaaaaaaaaa"), sandbox.id(), 80, true, Optional.empty(), T0.plusSeconds(1), Optional.empty());
        var tieB = new Preview(new PreviewId("prv_bbbbbbbbbbbbbbbb"), sandbox.id(), 81, true, Optional.empty(), T0.plusSeconds(1), Optional.empty());

        for (var p : List.of(second, tieB, first, tieA)) assertThat(catalog().insertPreview(p)).isTrue();

        assertThat(catalog().previewsOf(sandbox.id())).containsExactly(first, second, tieA, tieB);
        assertThat(catalog().findPreview(first.id())).contains(first);
        assertThat(catalog().findPreview(PreviewId.random())).isEmpty();
        assertThat(catalog().previewsOf(SandboxId.random())).isEmpty();
    }

    @Test
    void insertPreviewIsFalseForAMissingOrDeletingSandboxAndInternalForADuplicateId() {
        assertThat(catalog().insertPreview(CatalogFixtures.privatePreview(SandboxId.random(), 80, T0))).isFalse();

        var deleting = CatalogFixtures.running(T0);
        catalog().insert(deleting);
        catalog().update(deleting.withState(SandboxState.DELETED));
        assertThat(catalog().insertPreview(CatalogFixtures.privatePreview(deleting.id(), 80, T0))).isFalse();
        assertThat(catalog().previewsOf(deleting.id())).isEmpty();

        var live = CatalogFixtures.running(T0);
        catalog().insert(live);
        var preview = CatalogFixtures.privatePreview(live.id(), 80, T0);
        assertThat(catalog().insertPreview(preview)).isTrue();
        var sameId = new Preview(preview.id(), live.id(), 81, true, Optional.empty(), T0, Optional.empty());
        assertThatThrownBy(() -> catalog().insertPreview(sameId))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL));
        assertThat(catalog().previewsOf(live.id())).containsExactly(preview);
    }

    @Test
    void deletingASandboxDeletesItsPreviewsOnly() {
        var gone = CatalogFixtures.running(T0);
        var kept = CatalogFixtures.running(T0.plus(Duration.ofSeconds(1)));
        catalog().insert(gone);
        catalog().insert(kept);
        var goneOne = CatalogFixtures.privatePreview(gone.id(), 3000, T0);
        var keptOne = CatalogFixtures.privatePreview(kept.id(), 3000, T0);
        catalog().insertPreview(goneOne);
        catalog().insertPreview(keptOne);

        catalog().delete(gone.id());

        assertThat(catalog().findPreview(goneOne.id())).isEmpty();
        assertThat(catalog().previewsOf(kept.id())).containsExactly(keptOne);
    }

    @Test
    void deletePreviewIsIdempotent() {
        var sandbox = CatalogFixtures.running(T0);
        catalog().insert(sandbox);
        var preview = CatalogFixtures.privatePreview(sandbox.id(), 8080, T0);
        var kept = CatalogFixtures.privatePreview(sandbox.id(), 8081, T0.plusSeconds(1));
        catalog().insertPreview(preview);
        catalog().insertPreview(kept);

        catalog().deletePreview(preview.id());
        catalog().deletePreview(preview.id());
        catalog().deletePreview(PreviewId.random());

        assertThat(catalog().previewsOf(sandbox.id())).containsExactly(kept);
    }

    // --- helpers ---

    private static SandboxQuery query(Optional<String> state, Map<String, String> metadata) {
        return new SandboxQuery(state, metadata, Optional.empty(), 100, Optional.empty());
    }

    private static NetworkPolicy policy(String... allow) {
        return new NetworkPolicy(new EgressPolicy(EgressPolicy.Action.DENY,
                Arrays.stream(allow).map(a -> EgressRule.parse(a, "allow")).toList(), List.of(EgressRule.parse("10.9.0.0/16", "deny"))));
    }
}
