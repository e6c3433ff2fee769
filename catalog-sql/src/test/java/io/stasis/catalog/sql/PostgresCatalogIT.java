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
import io.stasis.core.network.EgressPolicy;
import io.stasis.core.network.NetworkPolicy;
import io.stasis.core.network.SandboxNetwork;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.secret.SealedSecret;
import io.stasis.core.node.Node;
import io.stasis.core.node.NodeCapacity;
import io.stasis.core.node.NodeLimits;
import io.stasis.core.tenant.QuotaGuard;
import io.stasis.core.tenant.Tenant;
import io.stasis.core.tenant.TenantId;
import io.stasis.core.tenant.TenantQuota;
import io.stasis.core.tenant.TenantUsage;
import io.stasis.testkit.CatalogFixtures;
import io.stasis.testkit.PostgresExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the PostgreSQL catalog adds to the shared contract: its schema, its lock, its credentials, concurrency, and the move from SQLite. */
@Tag("root")
class PostgresCatalogIT {
    @RegisterExtension
    static final PostgresExtension postgres = new PostgresExtension();

    @TempDir
    Path dir;

    private static PostgresLocation newDatabase() {
        return PostgresLocation.parse(postgres.server().newDatabase(), Optional.empty());
    }

    private static SqlCatalog open(PostgresLocation location) {
        return SqlCatalog.openPostgres(location, EventRetention.DEFAULT, "node-a");
    }

    @Test
    void theSchemaHasSqlitesTablesAndColumns() throws Exception {
        var location = newDatabase();
        open(location).close();
        SqlCatalog.openSqlite(dir.resolve("c.db")).close();

        var inPostgres = new TreeMap<String, TreeSet<String>>();
        try (var c = postgres.server().connect(location.database());
             var rs = c.createStatement().executeQuery(
                     "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'")) {
            while (rs.next()) inPostgres.computeIfAbsent(rs.getString(1), t -> new TreeSet<>()).add(rs.getString(2));
        }
        var sqlite = new TreeMap<String, TreeSet<String>>();
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("c.db"));
             var rs = c.createStatement().executeQuery(
                     "SELECT m.name, p.name FROM sqlite_master m JOIN pragma_table_info(m.name) p WHERE m.type = 'table' AND m.name <> 'sqlite_sequence'")) {
            while (rs.next()) sqlite.computeIfAbsent(rs.getString(1), t -> new TreeSet<>()).add(rs.getString(2));
        }
        assertThat(inPostgres).isEqualTo(sqlite);
        assertThat(inPostgres.keySet()).containsAll(SqliteToPostgres.TABLES);
        assertThat(inPostgres.keySet()).hasSize(SqliteToPostgres.TABLES.size() + 3); // and schema_version, nodes, quota_holds
    }

    @Test
    void reopeningKeepsEverythingAndMigratesNothingTwice() {
        var location = newDatabase();
        var s = CatalogFixtures.sandbox(Optional.of("keep"), "base", new SandboxState.Hibernated(CheckpointId.random(), 1234, T0),
                T0, new Resources(1.5, 512, 128, 2048), Map.of("K", "v"), Map.of("m.n/o", "p"));
        var key = new ApiKey("key_0123456789abcdef", TenantId.DEFAULT, "ab".repeat(32), true, T0);
        var secret = new SealedSecret("token", T0, new byte[] {0, 1, (byte) 0xff, 0x7f});
        try (var catalog = open(location)) {
            catalog.insert(s);
            catalog.insertApiKey(key);
            catalog.putSecret(TenantId.DEFAULT, secret);
        }
        try (var catalog = open(location)) {
            assertThat(catalog.find(s.id())).contains(s);
            assertThat(catalog.findApiKeyByHash(key.secretHash())).contains(key);
            assertThat(catalog.findSecret(TenantId.DEFAULT, "token").orElseThrow().sealed()).containsExactly(0, 1, 0xff, 0x7f);
            assertThat(catalog.hasRootKey()).isTrue();
        }
    }

    @Test
    void aSecondServiceWithTheSameNodeNameIsRefusedNamingTheHolderUntilTheFirstCloses() {
        var location = newDatabase();
        try (var first = open(location)) {
            assertThatThrownBy(() -> open(location))
                    .isInstanceOfSatisfying(StasisException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL);
                        assertThat(e.getMessage()).contains("node 'node-a' is already running", "stasis " + ProcessHandle.current().pid());
                    });
            first.insert(CatalogFixtures.named("still-mine"));
        }
        try (var second = open(location)) {
            assertThat(second.findByName(TenantId.DEFAULT, "still-mine")).isPresent();
        }
    }

    /**
     * The lock's session ended under a running service (a cut from the server): the service takes
     * the lock again before it renews its lease; if another service of its name took it meanwhile,
     * the renewal is refused until that one is gone.
     */
    @Test
    void aLockLostWithItsSessionIsTakenAgainBeforeTheNextRenewalOrTheRenewalIsRefused() {
        var location = newDatabase();
        try (var first = open(location)) {
            var now = java.time.Instant.now();
            first.putNode(new Node("node-a", java.net.URI.create("http://a:7070"), Optional.empty(), now, now.plusSeconds(15),
                    NodeCapacity.UNKNOWN, false));
            postgres.server().dropConnections(location.database());
            assertThat(first.renewNode("node-a", now.plusSeconds(20), NodeCapacity.UNKNOWN)).isTrue();
            assertThatThrownBy(() -> open(location)).isInstanceOfSatisfying(StasisException.class,
                    e -> assertThat(e.getMessage()).contains("node 'node-a' is already running"));

            postgres.server().dropConnections(location.database());
            try (var second = open(location)) { // took the name while the first had lost its session
                assertThatThrownBy(() -> first.renewNode("node-a", now.plusSeconds(25), NodeCapacity.UNKNOWN))
                        .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.getMessage()).contains("node 'node-a' is already running"));
            }
            assertThat(first.renewNode("node-a", now.plusSeconds(30), NodeCapacity.UNKNOWN)).as("the other one gone").isTrue();
        }
    }

    /**
     * The fence against a sandbox running on two nodes: a node adopts a sandbox only while no
     * operation of it is pending, and its old node, whose view is stale, can begin none on it after.
     * Many rounds of both at the same moment: exactly one of the two wins each.
     */
    @Test
    void anAdoptionAndAnOperationOfTheOldNodeNeverBothSucceed() throws Exception {
        var location = newDatabase();
        try (var a = open(location); var b = SqlCatalog.openPostgres(location, EventRetention.DEFAULT, "node-b");
             var pool = Executors.newVirtualThreadPerTaskExecutor()) {
            var adopted = CatalogFixtures.named("adopted");
            a.insert(adopted);
            assertThat(b.adoptSandbox(adopted.id(), "node-a", java.util.OptionalInt.empty(), Optional.empty())).isTrue();
            assertThatThrownBy(() -> a.beginOperation(new Operation(adopted.id(), Operation.Kind.RESTORE, Optional.empty(), T0)))
                    .isInstanceOfSatisfying(StasisException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.NODE_UNAVAILABLE);
                        assertThat(e.getMessage()).contains("node-b");
                    });
            assertThat(b.pendingOperations()).isEmpty();
            for (int round = 0; round < 40; round++) {
                var contested = CatalogFixtures.named("contested-" + round);
                a.insert(contested);
                var begun = pool.submit(() -> {
                    try {
                        a.beginOperation(new Operation(contested.id(), Operation.Kind.RESTORE, Optional.empty(), T0));
                        return true;
                    } catch (StasisException e) {
                        return false;
                    }
                });
                var taken = pool.submit(() -> b.adoptSandbox(contested.id(), "node-a", java.util.OptionalInt.empty(), Optional.empty()));
                assertThat(begun.get() ^ taken.get()).as("round %d: begun %s, adopted %s", round, begun.get(), taken.get()).isTrue();
            }
        }
    }

    /** A checkpoint its lost node was taking does not keep a running sandbox from being adopted from its last durable one. */
    @Test
    void aPendingCheckpointOfALostNodeGivesWayToAnAdoptionFromACheckpoint() {
        var location = newDatabase();
        try (var a = open(location); var b = SqlCatalog.openPostgres(location, EventRetention.DEFAULT, "node-b")) {
            var running = CatalogFixtures.named("mid-checkpoint");
            a.insert(running);
            var checkpoint = CatalogFixtures.checkpoint(running.id(), T0);
            a.insertCheckpoint(checkpoint);
            a.beginOperation(new Operation(running.id(), Operation.Kind.CHECKPOINT, Optional.empty(), T0));
            assertThat(b.adoptSandbox(running.id(), "node-a", java.util.OptionalInt.empty(), Optional.empty()))
                    .as("a hibernated-only adoption waits for the operation").isFalse();
            var asHibernated = running.withState(new SandboxState.Hibernated(checkpoint.id(), 1, T0));
            assertThat(b.adoptSandbox(running.id(), "node-a", java.util.OptionalInt.empty(), Optional.of(asHibernated))).isTrue();
            assertThat(a.pendingOperations()).isEmpty();
            var hibernating = CatalogFixtures.named("mid-hibernation");
            a.insert(hibernating);
            a.beginOperation(new Operation(hibernating.id(), Operation.Kind.HIBERNATE, Optional.empty(), T0));
            assertThat(b.adoptSandbox(hibernating.id(), "node-a", java.util.OptionalInt.empty(),
                    Optional.of(hibernating.withState(new SandboxState.Hibernated(checkpoint.id(), 1, T0))))).as("any other operation stays").isFalse();
        }
    }

    /** A running sandbox adopted from a checkpoint: its record becomes hibernated at it, and the checkpoint's record moves with it. */
    @Test
    void aRunningSandboxIsAdoptedHibernatedAtItsCheckpoint() {
        var location = newDatabase();
        try (var a = open(location); var b = SqlCatalog.openPostgres(location, EventRetention.DEFAULT, "node-b")) {
            var running = CatalogFixtures.named("running");
            a.insert(running);
            var checkpoint = CatalogFixtures.checkpoint(running.id(), T0);
            var other = CatalogFixtures.checkpoint(running.id(), T0.plusSeconds(1));
            a.insertCheckpoint(checkpoint);
            a.insertCheckpoint(other);
            var asHibernated = running.withState(new SandboxState.Hibernated(checkpoint.id(), 4096, T0));
            assertThat(b.adoptSandbox(running.id(), "node-a", java.util.OptionalInt.empty(), Optional.of(asHibernated))).isTrue();
            assertThat(b.find(running.id())).contains(asHibernated);
            assertThat(b.nodeOf(running.id())).contains("node-b");
            // The old node can complete nothing of it any more, nor end the new node's operation.
            b.beginOperation(new Operation(running.id(), Operation.Kind.RESTORE, Optional.of(checkpoint.id()), T0));
            assertThatThrownBy(() -> a.completeOperation(running)).isInstanceOfSatisfying(StasisException.class,
                    e -> assertThat(e.code()).isEqualTo(ErrorCode.NODE_UNAVAILABLE));
            a.abandonOperation(running.id());
            assertThat(b.pendingOperations()).hasSize(1);
            assertThat(b.find(running.id())).contains(asHibernated);
            assertThat(b.nodeOfCheckpoint(checkpoint.id())).contains("node-b");
            assertThat(b.nodeOfCheckpoint(other.id())).as("the others stay").contains("node-a");
        }
    }

    /** Two nodes on one catalog: each reconciles its own records, and both see every record by id, name and listing. */
    @Test
    void nodesShareTheCatalogAndEachListsItsOwnRecordsForReconciliation() {
        var location = newDatabase();
        try (var a = open(location); var b = SqlCatalog.openPostgres(location, EventRetention.DEFAULT, "node-b")) {
            var onA = CatalogFixtures.named("on-a");
            var onB = CatalogFixtures.named("on-b");
            a.insert(onA);
            b.insert(onB);
            a.insertNetwork(new SandboxNetwork(onA.id(), 0, new NetworkPolicy(EgressPolicy.ALLOW_ALL, java.util.List.of())));
            b.insertNetwork(new SandboxNetwork(onB.id(), 0, new NetworkPolicy(EgressPolicy.ALLOW_ALL, java.util.List.of()))); // slots are per node
            a.insertCheckpoint(CatalogFixtures.checkpoint(onA.id(), T0));
            a.beginOperation(new Operation(onA.id(), Operation.Kind.HIBERNATE, Optional.empty(), T0));

            assertThat(a.all()).extracting(s -> s.id()).containsExactly(onA.id());
            assertThat(b.all()).extracting(s -> s.id()).containsExactly(onB.id());
            assertThat(b.allNetworks()).hasSize(1);
            assertThat(b.allCheckpoints()).isEmpty();
            assertThat(b.pendingOperations()).isEmpty();
            assertThat(a.pendingOperations()).hasSize(1);
            assertThat(b.find(onA.id())).isPresent();
            assertThat(b.nodeOf(onA.id())).contains("node-a");
            assertThat(b.list(io.stasis.core.sandbox.SandboxQuery.all()).items()).hasSize(2);
            assertThat(b.checkpointsOfTenant(TenantId.DEFAULT)).hasSize(1);
            assertThat(a.sandboxCountsByNode()).containsEntry("node-a", 1).containsEntry("node-b", 1);
        }
    }

    @Test
    void aWrongPasswordOrAMissingDatabaseIsAClearErrorThatNeverShowsThePassword() {
        var location = newDatabase();
        var wrong = new PostgresLocation(location.host(), location.port(), location.database(), location.user(), Optional.of("not-it-0xSECRET"));
        assertThatThrownBy(() -> open(wrong))
                .isInstanceOfSatisfying(StasisException.class, e -> {
                    assertThat(e.getMessage()).contains("cannot open the catalog", location.toString(), "password authentication failed")
                            .doesNotContain("not-it-0xSECRET").doesNotContain(postgres.server().password());
                    assertThat(e.details().toString()).doesNotContain("not-it-0xSECRET");
                });
        var missing = new PostgresLocation(location.host(), location.port(), "no_such_db", location.user(), location.password());
        assertThatThrownBy(() -> open(missing))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.getMessage()).contains("no_such_db")
                        .doesNotContain(postgres.server().password()));
    }

    /**
     * Creates admitted on two nodes at once, each recording its sandbox a moment after its admission,
     * as a create does: the tenant's quota and each node's limit hold across both, never overshot.
     */
    @Test
    void concurrentCreatesOnTwoNodesNeverOvershootATenantQuotaOrANode() throws Exception {
        var location = newDatabase();
        try (var a = open(location); var b = SqlCatalog.openPostgres(location, EventRetention.DEFAULT, "node-b");
             var pool = Executors.newVirtualThreadPerTaskExecutor()) {
            var tenant = new Tenant(TenantId.random(), "capped", new TenantQuota(Optional.of(7), Optional.empty(), Optional.empty()), T0);
            a.insertTenant(tenant);
            var guards = List.of(new QuotaGuard(a, "node-a", new NodeLimits(4, 0)), new QuotaGuard(b, "node-b", new NodeLimits(0, 0)));
            var catalogs = List.of(a, b);
            var refusals = new ConcurrentLinkedQueue<ErrorCode>();
            var tasks = IntStream.range(0, 24).mapToObj(i -> pool.submit(() -> {
                int node = i % 2;
                try {
                    guards.get(node).admit(tenant.id(), new TenantUsage(1, 64, 64), () -> {
                        LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
                        catalogs.get(node).insert(CatalogFixtures.ofTenant(tenant.id(), SandboxState.RUNNING, 64, 64, T0));
                        return null;
                    });
                } catch (StasisException e) {
                    refusals.add(e.code());
                }
            })).toList();
            for (var task : tasks) task.get();
            assertThat(a.usage(tenant.id()).runningSandboxes()).as("the tenant's quota").isEqualTo(7);
            var loads = a.nodeLoads();
            assertThat(loads.get("node-a").runningSandboxes()).as("node-a's limit").isLessThanOrEqualTo(4);
            assertThat(loads.values().stream().mapToInt(TenantUsage::runningSandboxes).sum()).isEqualTo(7);
            assertThat(refusals).hasSize(24 - 7).allSatisfy(code -> assertThat(code).isIn(ErrorCode.QUOTA_EXCEEDED, ErrorCode.HOST_BUSY));
            assertThat(b.nodeLoads()).as("no hold left").isEqualTo(loads);
        }
    }

    /**
     * Eight writers append while a reader polls "after the last id it saw", as an event stream does:
     * with turns, ids become visible in order, so the reader misses none.
     */
    @Test
    void aReaderPollingAfterTheLastIdSeesEveryConcurrentAppend() throws Exception {
        try (var catalog = open(newDatabase()); var pool = Executors.newVirtualThreadPerTaskExecutor()) {
            var appended = new ConcurrentSkipListSet<Long>();
            var done = new AtomicBoolean();
            var seen = new ArrayList<Long>();
            var reader = pool.submit(() -> {
                long after = 0;
                while (true) {
                    boolean last = done.get();
                    var page = catalog.eventsAfter(after, Optional.empty(), Optional.empty(), 1000);
                    for (Event e : page) seen.add(e.id());
                    if (!page.isEmpty()) after = page.getLast().id();
                    if (last && page.isEmpty()) return null;
                }
            });
            var writers = IntStream.range(0, 8).mapToObj(w -> pool.submit(() -> {
                for (int i = 0; i < 100; i++)
                    appended.add(catalog.appendEvent(new Event(0, T0, "test.append", Optional.empty(), Map.of("w", w, "i", i), Optional.empty())).id());
                return null;
            })).toList();
            for (var writer : writers) writer.get();
            done.set(true);
            reader.get();
            assertThat(seen).containsExactlyElementsOf(appended);
            assertThat(appended).hasSize(800);
        }
    }

    @Test
    void aSqliteCatalogMovesIntoAFreshDatabaseOnceAndIsKeptAsABackup() throws Exception {
        Path file = dir.resolve("stasis.db");
        var s = CatalogFixtures.named("moved");
        var key = new ApiKey("key_0123456789abcdef", TenantId.DEFAULT, "cd".repeat(32), true, T0);
        var tenant = CatalogFixtures.tenant("acme", T0);
        long lastEvent;
        try (var sqlite = SqlCatalog.openSqlite(file)) {
            sqlite.insertTenant(tenant);
            sqlite.insert(CatalogFixtures.inTenant(s, tenant.id()));
            sqlite.insertApiKey(key);
            sqlite.insertCheckpoint(CatalogFixtures.checkpoint(s.id(), T0));
            sqlite.putSecret(tenant.id(), new SealedSecret("k", T0, new byte[] {9, 8, 7}));
            for (int i = 0; i < 3; i++) sqlite.appendEvent(new Event(0, T0, "test", Optional.of(s.id()), Map.of("i", i), Optional.of(tenant.id())));
            lastEvent = sqlite.eventsAfter(0, Optional.empty(), Optional.empty(), 10).getLast().id();
        }
        var location = newDatabase();
        try (var postgres = open(location)) {
            var moved = SqliteToPostgres.moveIfPresent(file, postgres).orElseThrow();
            assertThat(moved).containsEntry("sandboxes", 1).containsEntry("tenants", 2).containsEntry("events", 3).containsEntry("api_keys", 1);
            assertThat(postgres.findByName(tenant.id(), "moved")).isPresent();
            assertThat(postgres.findApiKeyByHash(key.secretHash())).contains(key);
            assertThat(postgres.checkpointsOf(s.id())).hasSize(1);
            assertThat(postgres.findSecret(tenant.id(), "k").orElseThrow().sealed()).containsExactly(9, 8, 7);
            assertThat(postgres.findTenant(TenantId.DEFAULT)).isPresent();
            // Event ids go on after the copied ones.
            assertThat(postgres.appendEvent(new Event(0, T0, "after", Optional.empty(), Map.of(), Optional.empty())).id()).isGreaterThan(lastEvent);

            assertThat(file).doesNotExist();
            assertThat(dir.resolve("stasis.db" + SqliteToPostgres.MOVED)).exists();
            assertThat(SqliteToPostgres.moveIfPresent(file, postgres)).isEmpty();
        }
    }

    @Test
    void aMoveIsRefusedIntoADatabaseThatHoldsACatalogAlready() {
        Path file = dir.resolve("stasis.db");
        try (var sqlite = SqlCatalog.openSqlite(file)) {
            sqlite.insert(CatalogFixtures.named("file-side"));
        }
        try (var postgres = open(newDatabase())) {
            postgres.insert(CatalogFixtures.named("database-side"));
            assertThatThrownBy(() -> SqliteToPostgres.moveIfPresent(file, postgres))
                    .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.getMessage()).contains("is not empty"));
            assertThat(file).exists();
            assertThat(postgres.findByName(TenantId.DEFAULT, "file-side")).isEmpty();
        }
    }

    /** A move killed after its copy committed but before its last rename finishes by renaming only. */
    @Test
    void aMoveKilledAfterItsCopyFinishesByRenamingAndOneKilledBeforeCopiesAgain() throws Exception {
        Path file = dir.resolve("stasis.db");
        try (var sqlite = SqlCatalog.openSqlite(file)) {
            sqlite.insert(CatalogFixtures.named("interrupted"));
        }
        Files.move(file, dir.resolve("stasis.db" + SqliteToPostgres.MOVING));
        try (var postgres = open(newDatabase())) {
            // killed before the copy: the database is fresh, so the copy runs
            assertThat(SqliteToPostgres.moveIfPresent(file, postgres).orElseThrow()).containsEntry("sandboxes", 1);
            // killed after the copy, before the last rename
            Files.move(dir.resolve("stasis.db" + SqliteToPostgres.MOVED), dir.resolve("stasis.db" + SqliteToPostgres.MOVING));
            assertThat(SqliteToPostgres.moveIfPresent(file, postgres).orElseThrow()).isEmpty();
            assertThat(postgres.all()).hasSize(1);
            assertThat(dir.resolve("stasis.db" + SqliteToPostgres.MOVED)).exists();
        }
    }

    @Test
    void sessionsEndedUnderTheCatalogAreReplacedByThePool() {
        var location = newDatabase();
        try (var catalog = open(location)) {
            catalog.insert(CatalogFixtures.named("before"));
            postgres.server().dropConnections(location.database());
            // The pool still holds the ended sessions; a call that meets one retries on a new connection.
            for (int i = 0; i < 20; i++) assertThat(catalog.findByName(TenantId.DEFAULT, "before")).isPresent();
            catalog.insert(CatalogFixtures.named("after"));
            assertThat(catalog.findByName(TenantId.DEFAULT, "after")).isPresent();
        }
    }
}
