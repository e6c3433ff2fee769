package io.stasis.catalog.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxQuery;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.tenant.TenantId;
import io.stasis.testkit.CatalogFixtures;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.lifecycle.AfterTry;
import net.jqwik.api.lifecycle.BeforeTry;

/**
 * Whatever inserts and deletes happened, paging through {@code list()} yields exactly the live
 * sandboxes (those not being deleted) that match the filter, each once, in (created_at, id) order;
 * with a tenant, only that tenant's.
 */
class ListPagingPropertyTest {
    private static final Comparator<Sandbox> LIST_ORDER =
            Comparator.comparing(Sandbox::createdAt).thenComparing(Sandbox::id);
    private static final TenantId OTHER = new TenantId("ten_0123456789abcdef");

    private Path dir;
    private SqlCatalog catalog;

    sealed interface Op {
    }

    /** Inserts a sandbox; few distinct times, so ties on created_at are common. */
    record Insert(int second, String state, String team, TenantId tenant) implements Op {
    }

    /** Deletes the live record at {@code pick} modulo their number (nothing if there are none). */
    record Delete(int pick) implements Op {
    }

    @BeforeTry
    void open() throws IOException {
        dir = Files.createTempDirectory("catalog-property");
        catalog = SqlCatalog.openSqlite(dir.resolve("catalog.db"));
    }

    @AfterTry
    void closeAndRemove() throws IOException {
        catalog.close();
        try (Stream<Path> files = Files.walk(dir)) {
            for (var p : files.sorted(Comparator.reverseOrder()).toList()) Files.delete(p);
        }
    }

    @Property(tries = 150)
    void pagingReturnsExactlyTheLiveSetInOrder(@ForAll("ops") List<Op> ops,
                                               @ForAll @IntRange(min = 1, max = 25) int limit,
                                               @ForAll("stateFilters") Optional<String> state,
                                               @ForAll("teamFilters") Optional<String> team,
                                               @ForAll("tenantFilters") Optional<TenantId> tenant) {
        var model = new LinkedHashMap<SandboxId, Sandbox>();
        for (var op : ops) {
            switch (op) {
                case Insert insert -> {
                    var s = sandbox(insert);
                    catalog.insert(s);
                    model.put(s.id(), s);
                }
                case Delete delete -> {
                    if (model.isEmpty()) continue;
                    var victim = new ArrayList<>(model.keySet()).get(delete.pick() % model.size());
                    catalog.delete(victim);
                    model.remove(victim);
                }
            }
        }
        var expected = model.values().stream()
                .filter(s -> !(s.state() instanceof SandboxState.Deleted))
                .filter(s -> state.map(s.state().wireName()::equals).orElse(true))
                .filter(s -> team.map(t -> t.equals(s.metadata().get("team"))).orElse(true))
                .filter(s -> tenant.map(s.tenant()::equals).orElse(true))
                .sorted(LIST_ORDER)
                .toList();

        var seen = new ArrayList<Sandbox>();
        var cursors = new HashSet<String>();
        Optional<String> cursor = Optional.empty();
        do {
            var page = catalog.list(new SandboxQuery(state, team.map(t -> Map.of("team", t)).orElse(Map.of()), cursor, limit, tenant));
            assertThat(page.items()).hasSizeLessThanOrEqualTo(limit);
            if (page.nextCursor().isPresent()) {
                assertThat(page.items()).hasSize(limit);
                assertThat(cursors.add(page.nextCursor().get())).as("cursor repeated").isTrue();
            }
            seen.addAll(page.items());
            cursor = page.nextCursor();
        } while (cursor.isPresent());

        assertThat(seen).containsExactlyElementsOf(expected);
        assertThat(catalog.all()).containsExactlyElementsOf(model.values().stream().sorted(LIST_ORDER).toList());
    }

    private static Sandbox sandbox(Insert insert) {
        SandboxState state = switch (insert.state()) {
            case "running" -> SandboxState.RUNNING;
            case "paused" -> SandboxState.PAUSED;
            case "hibernated" -> new SandboxState.Hibernated(CheckpointId.random(), 1 << 20, CatalogFixtures.T0);
            case "stopped" -> new SandboxState.Stopped("idle");
            case "deleted" -> SandboxState.DELETED;
            default -> throw new IllegalArgumentException(insert.state());
        };
        return CatalogFixtures.inTenant(CatalogFixtures.sandbox(Optional.empty(), "tiny", state,
                CatalogFixtures.T0.plusSeconds(insert.second()), Resources.DEFAULT, Map.of(),
                insert.team().isEmpty() ? Map.of() : Map.of("team", insert.team())), insert.tenant());
    }

    @Provide
    Arbitrary<List<Op>> ops() {
        Arbitrary<Op> insert = Combinators.combine(
                Arbitraries.integers().between(0, 5),
                Arbitraries.of("running", "paused", "hibernated", "stopped", "deleted"),
                Arbitraries.of("", "red", "blue"),
                Arbitraries.of(TenantId.DEFAULT, OTHER)).as(Insert::new);
        Arbitrary<Op> delete = Arbitraries.integers().between(0, 1000).map(Delete::new);
        return Arbitraries.frequencyOf(
                Tuple.of(3, insert),
                Tuple.of(1, delete)).list().ofMaxSize(80);
    }

    @Provide
    Arbitrary<Optional<String>> stateFilters() {
        return Arbitraries.of("running", "paused", "hibernated", "stopped").optional(0.3);
    }

    @Provide
    Arbitrary<Optional<String>> teamFilters() {
        return Arbitraries.of("red", "blue").optional(0.3);
    }

    @Provide
    Arbitrary<Optional<TenantId>> tenantFilters() {
        return Arbitraries.of(TenantId.DEFAULT, OTHER, TenantId.random()).optional(0.5);
    }
}
