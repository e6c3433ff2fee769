package io.stasis.catalog.sql;

import io.stasis.core.sandbox.RuntimeKind;
import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.checkpoint.Checkpoint;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.events.Event;
import io.stasis.core.journal.Operation;
import io.stasis.core.policy.LifecyclePolicy;
import io.stasis.core.sandbox.Ids;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.tenant.TenantId;
import io.stasis.testkit.CatalogFixtures;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
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
import net.jqwik.api.lifecycle.AfterProperty;
import net.jqwik.api.lifecycle.BeforeProperty;

/**
 * Whatever a record holds, the catalog gives it back equal: every sandbox state with its data,
 * lineage, lifecycle policies (any positive duration, to the nanosecond), checkpoints,
 * operations, the tenant a sandbox or an event belongs to, and event data of plain JSON values
 * nested at will.
 */
class RecordRoundTripPropertyTest {
    private static final long MIN_SECOND = Instant.parse("0000-01-01T00:00:00Z").getEpochSecond();
    private static final long MAX_SECOND = Instant.parse("9999-12-31T23:59:59Z").getEpochSecond();

    private Path dir;
    private SqlCatalog catalog;

    @BeforeProperty
    void open() throws IOException {
        dir = Files.createTempDirectory("catalog-roundtrip");
        catalog = SqlCatalog.openSqlite(dir.resolve("catalog.db"));
    }

    @AfterProperty
    void closeAndRemove() throws IOException {
        catalog.close();
        try (Stream<Path> files = Files.walk(dir)) {
            for (var p : files.sorted(Comparator.reverseOrder()).toList()) Files.delete(p);
        }
    }

    @Property(tries = 300)
    void everySandboxRecordRoundTripsThroughInsertAndUpdate(@ForAll("sandboxes") Sandbox first, @ForAll("sandboxes") Sandbox second) {
        catalog.insert(first);
        assertThat(catalog.find(first.id())).contains(first);

        var replaced = CatalogFixtures.withId(second, first.id());
        catalog.update(replaced);
        assertThat(catalog.find(first.id())).contains(replaced);
    }

    @Property(tries = 200)
    void checkpointsAndOperationsRoundTrip(@ForAll("checkpoints") Checkpoint checkpoint, @ForAll("operations") Operation operation) {
        catalog.insertCheckpoint(checkpoint);
        catalog.beginOperation(operation);

        assertThat(catalog.findCheckpoint(checkpoint.id())).contains(checkpoint);
        assertThat(catalog.pendingOperations()).contains(operation);
    }

    @Property(tries = 300)
    void eventDataRoundTrips(@ForAll("eventData") Map<String, Object> data, @ForAll("instants") Instant at,
                             @ForAll("eventTenants") Optional<TenantId> tenant) {
        // An event of a tenant is about one of its sandboxes; one of no tenant is about none.
        var sandbox = tenant.map(t -> SandboxId.random());
        var appended = catalog.appendEvent(new Event(0, at, "lifecycle", sandbox, data, tenant));

        assertThat(appended.data()).isEqualTo(data);
        assertThat(appended.tenant()).isEqualTo(tenant);
        assertThat(catalog.eventsAfter(appended.id() - 1, Optional.empty(), Optional.empty(), 1)).containsExactly(appended);
        assertThat(catalog.eventsAfter(appended.id() - 1, Optional.empty(), Optional.of(tenant.orElse(TenantId.DEFAULT)), 1))
                .containsExactly(appended);
    }

    @Provide
    Arbitrary<Sandbox> sandboxes() {
        var env = Arbitraries.maps(texts(), texts()).ofMaxSize(3);
        var names = Arbitraries.create(() -> "n" + Ids.randomSuffix()).optional(0.5); // unique, so inserts never collide
        // combine takes at most 8: env, metadata and the generation go in one tuple
        var envMetadataGeneration = Combinators.combine(env, env, Arbitraries.longs().between(1, Long.MAX_VALUE)).as(Tuple::of);
        return Combinators.combine(names, states(), instants(), envMetadataGeneration,
                        Arbitraries.create(SandboxId::random).optional(0.5), checkpointIds().optional(0.5), lifecycles(), tenants())
                .as((name, state, createdAt, maps, parent, checkpoint, lifecycle, tenant) -> new Sandbox(SandboxId.random(), name,
                        "tiny", state, createdAt, new Resources(0.5, 256, 64, 64 + (int) (createdAt.getNano() % 100_000)), maps.get1(),
                        maps.get2(), parent, checkpoint, lifecycle, tenant, maps.get3(), RuntimeKind.RUNC));
    }

    /** The default tenant or a random one: the catalog does not require a tenant's row for its sandboxes or events. */
    Arbitrary<TenantId> tenants() {
        return Arbitraries.oneOf(Arbitraries.just(TenantId.DEFAULT), Arbitraries.create(TenantId::random));
    }

    @Provide
    Arbitrary<Optional<TenantId>> eventTenants() {
        return tenants().optional(0.7);
    }

    Arbitrary<SandboxState> states() {
        Arbitrary<SandboxState> hibernated = Combinators.combine(checkpointIds(), Arbitraries.longs().greaterOrEqual(0), instants())
                .as(SandboxState.Hibernated::new);
        Arbitrary<SandboxState> stopped = texts().injectNull(0.2).map(SandboxState.Stopped::new);
        return Arbitraries.oneOf(Arbitraries.of(SandboxState.RUNNING, SandboxState.PAUSED, SandboxState.STANDBY, SandboxState.DELETED), hibernated, stopped);
    }

    Arbitrary<LifecyclePolicy> lifecycles() {
        var step = durations().optional(0.6);
        return Combinators.combine(step, step, step, step, step, step, Arbitraries.of(true, false), step).as(LifecyclePolicy::new);
    }

    Arbitrary<Duration> durations() {
        var seconds = Arbitraries.oneOf(Arbitraries.longs().between(0, 100), Arbitraries.longs().between(0, 1L << 40));
        var nanos = Arbitraries.oneOf(Arbitraries.of(0, 1, 999_999_999), Arbitraries.integers().between(0, 999_999_999));
        return Combinators.combine(seconds, nanos).as(Duration::ofSeconds).filter(d -> !d.isZero());
    }

    @Provide
    Arbitrary<Checkpoint> checkpoints() {
        return Combinators.combine(checkpointIds(), texts().optional(0.5), Arbitraries.of(true, false),
                        Arbitraries.of(Checkpoint.Purpose.class), Arbitraries.longs().greaterOrEqual(0), instants())
                .as((id, name, memory, purpose, size, at) -> new Checkpoint(id, SandboxId.random(), name, memory, purpose, size, at, RuntimeKind.RUNC));
    }

    @Provide
    Arbitrary<Operation> operations() {
        return Combinators.combine(Arbitraries.of(Operation.Kind.class), checkpointIds().optional(0.5), instants())
                .as((kind, checkpoint, at) -> new Operation(SandboxId.random(), kind, checkpoint, at));
    }

    @Provide
    Arbitrary<Map<String, Object>> eventData() {
        // Event copies its data with Map.copyOf, which refuses null values at the top level; nested ones are fine.
        return Arbitraries.maps(texts(), jsonValue(2)).ofMaxSize(5);
    }

    private Arbitrary<Object> jsonValue(int depth) {
        Arbitrary<Object> leaf = Arbitraries.oneOf(
                texts().map(Object.class::cast),
                Arbitraries.longs().map(Object.class::cast),
                Arbitraries.of(0.0, -0.0, 0.1, -2.5e-300, 1.0e300, Double.MIN_VALUE, Double.MAX_VALUE).map(Object.class::cast),
                Arbitraries.doubles().map(Object.class::cast),
                Arbitraries.of(true, false).map(Object.class::cast));
        if (depth == 0) return leaf;
        Arbitrary<Object> nullableChild = jsonValue(depth - 1).injectNull(0.1);
        Arbitrary<Object> list = nullableChild.list().ofMaxSize(4).map(Object.class::cast);
        Arbitrary<Object> map = Arbitraries.maps(texts(), nullableChild).ofMaxSize(4).map(Object.class::cast);
        return Arbitraries.frequencyOf(Tuple.of(4, leaf), Tuple.of(1, list), Tuple.of(1, map));
    }

    /** Text with quotes, escapes, control characters, accents and a character outside the BMP. */
    private static Arbitrary<String> texts() {
        var plain = Arbitraries.strings().withCharRange(' ', '~').withChars("\n\t\u0000\"\\é✓").ofMaxLength(12);
        return Arbitraries.oneOf(plain, plain.map(s -> s + "\uD83D\uDE00"));
    }

    private static Arbitrary<CheckpointId> checkpointIds() {
        return Arbitraries.create(CheckpointId::random);
    }

    @Provide
    Arbitrary<Instant> instants() {
        var seconds = Arbitraries.oneOf(Arbitraries.longs().between(1_700_000_000L, 1_700_000_010L),
                Arbitraries.longs().between(MIN_SECOND, MAX_SECOND));
        return Combinators.combine(seconds, Arbitraries.integers().between(0, 999_999_999)).as(Instant::ofEpochSecond);
    }

}
