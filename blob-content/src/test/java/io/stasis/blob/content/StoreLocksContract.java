package io.stasis.blob.content;

import static io.stasis.blob.content.FaultyBlobStore.Op.LIST;
import static io.stasis.blob.content.FaultyBlobStore.Op.LIST_CALL;
import static io.stasis.blob.content.FaultyBlobStore.Op.PUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.blob.FastCdc;
import io.stasis.core.blob.ManifestId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.spi.BlobStore;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The store-wide lock protocol between processes sharing one backend, on every backend: each
 * "process" here is a {@link ContentStore} of its own (own pins, own holder name) on the same
 * {@link BlobStore}, so nothing but the lock objects keeps them apart. Subclasses give the backend.
 */
abstract class StoreLocksContract {
    private static final Logger log = LoggerFactory.getLogger(StoreLocksContract.class);
    private static final FastCdc SMALL = new FastCdc(4096, 16384, 65536);
    /** No grace: only the locks (and, within one store, the pins) protect anything. */
    static final ContentStoreConfig CONFIG = ContentStoreConfig.DEFAULT.withChunker(SMALL).withGcGrace(Duration.ZERO)
            .withRetry(new RetryPolicy(3, Duration.ofMillis(1), Duration.ofMillis(2)))
            .withLocks(new LockTiming(Duration.ofSeconds(60), Duration.ofSeconds(5), Duration.ofSeconds(60)));

    private BlobStore backend;
    FaultyBlobStore faulty;

    /** A new, empty backend; closed after the test. */
    abstract BlobStore newBackend();

    @BeforeEach
    void open() {
        backend = newBackend();
        faulty = new FaultyBlobStore(backend);
    }

    @AfterEach
    void close() {
        backend.close();
    }

    private ContentStore process(String holder, ContentStoreConfig config) {
        return new ContentStore(faulty, config, Clock.systemUTC(), holder);
    }

    @Test
    void aCollectionBacksOffWhileAnotherProcessUploadsAndRunsOnceItEnds() {
        var uploader = process("host-a", CONFIG);
        var collector = process("host-b", CONFIG);
        var orphan = collector.put(TestData.random(1, 200_000)).manifest(); // nothing names it: garbage

        try (var session = uploader.session()) {
            var put = session.put(TestData.random(2, 200_000));
            assertThatThrownBy(() -> collector.gc(Set.of())).isInstanceOfSatisfying(StasisException.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.STORE_BUSY);
                assertThat(e.details()).containsEntry("holders", List.of("host-a"));
            });
            assertThat(collector.exists(orphan)).as("a collection that backed off deleted nothing").isTrue();
            assertThat(collector.exists(put.manifest())).isTrue();
        }
        assertThat(collector.gc(Set.of()).manifestsDeleted()).isEqualTo(2);
        assertThat(backend.listAll(StoreLocks.PREFIX).count()).as("no lock objects left behind").isZero();
    }

    @Test
    void anUploadWaitsWhileAnotherProcessCollectsThenGoesOn() throws Exception {
        var collector = process("host-b", CONFIG);
        var uploader = process("host-a", CONFIG);
        byte[] data = TestData.random(3, 300_000);
        var collecting = new CountDownLatch(1);
        var finish = new CountDownLatch(1);
        var lockListings = new AtomicInteger();
        faulty.with((op, key) -> {
            if (op == LIST && key.equals(StoreLocks.PREFIX)) lockListings.incrementAndGet();
        });
        try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
            Future<GcReport> gc = pool.submit(() -> collector.gc(() -> {
                collecting.countDown();
                await(finish);
                return Set.of();
            }, step -> { }));
            await(collecting); // the collection holds the exclusive lock and is marking
            Future<PutResult> put = pool.submit(() -> uploader.put(data));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (lockListings.get() < 3 && System.nanoTime() < deadline) pauseBriefly(); // the collection's, then the upload's twice
            assertThat(lockListings.get()).as("the upload looked at the locks twice").isGreaterThanOrEqualTo(3);
            assertThat(put.isDone()).as("the upload waits for the collection").isFalse();
            assertThat(backend.listAll("manifests/").count()).isZero();
            // A waiting upload keeps its lock: a collection that begins now backs off instead of starving it.
            assertThatThrownBy(() -> process("host-c", CONFIG).gc(Set.of())).isInstanceOfSatisfying(StasisException.class,
                    e -> assertThat(e.details().get("holders").toString()).contains("host-a", "host-b"));
            finish.countDown();
            gc.get(60, TimeUnit.SECONDS);
            var stored = put.get(60, TimeUnit.SECONDS);
            assertThat(TestData.readAll(uploader.open(stored.manifest()))).isEqualTo(data);
        }
    }

    @Test
    void aDeadProcessBlocksUntilItsLockIsStaleOrItRestarts() {
        var quick = CONFIG.withLocks(new LockTiming(Duration.ofSeconds(2), Duration.ofMillis(500), Duration.ofSeconds(10)));
        var collector = process("host-b", quick);
        // host-a died in the middle of an upload: its lock object stays, never refreshed again.
        faulty.with(FaultyBlobStore.crashAt(PUT, "manifests/", 1));
        assertThatThrownBy(() -> process("host-a", quick).put(TestData.random(4, 200_000))).isInstanceOf(FaultyBlobStore.SimulatedCrash.class);
        faulty.clearHooks();
        assertThat(backend.listAll("locks/host-a/").count()).isOne();
        assertThatThrownBy(() -> collector.gc(Set.of())).hasMessageContaining("host-a");

        // Once stale, it no longer counts, and the collection takes the dead upload's chunks.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        GcReport report = null;
        while (report == null) {
            try {
                report = collector.gc(Set.of());
            } catch (StasisException e) {
                if (e.code() != ErrorCode.STORE_BUSY || System.nanoTime() > deadline) throw e;
                pauseBriefly();
            }
        }
        assertThat(report.chunksDeleted()).isPositive();
        assertThat(collector.locks()).as("the collection removed the stale lock").isEmpty();
    }

    @Test
    void aRestartedProcessRemovesTheLockItsDeadRunLeftAtOnce() {
        var collector = process("host-b", CONFIG);
        faulty.with(FaultyBlobStore.crashAt(PUT, "manifests/", 1));
        assertThatThrownBy(() -> process("host-a", CONFIG).put(TestData.random(4, 200_000))).isInstanceOf(FaultyBlobStore.SimulatedCrash.class);
        faulty.clearHooks();
        assertThat(collector.locks()).singleElement().satisfies(l -> {
            assertThat(l.holder()).isEqualTo("host-a");
            assertThat(l.kind()).isEqualTo(StoreLocks.Kind.SHARED);
            assertThat(l.stale()).isFalse();
        });
        assertThatThrownBy(() -> collector.gc(Set.of())).hasMessageContaining("host-a");

        process("host-a", CONFIG).clearOwnLocks();
        assertThat(collector.locks()).isEmpty();
        assertThat(collector.gc(Set.of()).chunksDeleted()).isPositive();
    }

    @Test
    void anUploadWhoseLockLapsedWritesNoManifest() {
        var ticks = new AtomicLong();
        var uploader = new ContentStore(faulty, CONFIG, Clock.systemUTC(), "host-a", ticks::get);
        try (var session = uploader.session()) {
            ticks.addAndGet(CONFIG.locks().trustFor().toNanos() + 1); // as if the process had been stopped that long
            assertThatThrownBy(() -> session.put(TestData.random(5, 200_000))).isInstanceOfSatisfying(StasisException.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.RUNTIME_FAILED);
                assertThat(e.getMessage()).contains("lapsed");
            });
        }
        assertThat(backend.listAll("manifests/").count()).as("a lapsed upload commits nothing").isZero();
        assertThat(uploader.put(TestData.random(5, 200_000)).manifest()).as("the next upload takes a new lock").isNotNull();
    }

    /**
     * The interleaving where both sides write their lock before either lists: the collection, held
     * just before it lists the locks, then sees the upload's and backs off; the upload sees the
     * collection's and waits until it is gone. Both may back off; never both proceed.
     */
    @Test
    void whenBothWriteBeforeEitherListsTheCollectionBacksOffAndTheUploadGoesOn() throws Exception {
        var collector = process("host-b", CONFIG);
        var garbage = collector.put(TestData.random(6, 200_000)).manifest();
        var beforeListing = new FaultyBlobStore.Gate(LIST_CALL, StoreLocks.PREFIX);
        var gc = interleave(collector, beforeListing);
        assertThatThrownBy(gc::get).hasCauseInstanceOf(StasisException.class).cause().hasMessageContaining("host-a");
        assertThat(collector.exists(garbage)).as("the collection that backed off deleted nothing").isTrue();
    }

    /**
     * The other interleaving: the collection lists the locks before the upload writes its own, so
     * it collects; the upload, listing after its write, sees the collection's lock and waits for it.
     */
    @Test
    void whenTheCollectionListsFirstItCollectsAndTheUploadWaitsForIt() throws Exception {
        var collector = process("host-b", CONFIG);
        var garbage = collector.put(TestData.random(6, 200_000)).manifest();
        var afterListing = new FaultyBlobStore.Gate(LIST, StoreLocks.PREFIX);
        var gc = interleave(collector, afterListing);
        assertThat(gc.get().manifestsDeleted()).isEqualTo(1);
        assertThat(collector.exists(garbage)).isFalse();
    }

    /**
     * Starts a collection, holds it at {@code gate} (its exclusive lock written), starts an upload
     * from host-a and lets the collection go once the upload's lock is written. Checks that the
     * upload ends with its stream whole, whatever the collection did; returns the collection.
     */
    private Future<GcReport> interleave(ContentStore collector, FaultyBlobStore.Gate gate) throws Exception {
        var uploader = process("host-a", CONFIG);
        byte[] data = TestData.random(7, 200_000);
        faulty.with(gate);
        try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
            Future<GcReport> gc = pool.submit(() -> collector.gc(Set.of()));
            gate.awaitReached();
            Future<PutResult> put = pool.submit(() -> uploader.put(data));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (backend.listAll(StoreLocks.PREFIX + "host-a/").count() == 0 && System.nanoTime() < deadline) pauseBriefly();
            gate.release();
            try {
                gc.get(60, TimeUnit.SECONDS);
            } catch (ExecutionException backedOff) {
                // the test that called looks at it
            }
            assertThat(TestData.readAll(uploader.open(put.get(60, TimeUnit.SECONDS).manifest()))).isEqualTo(data);
            return gc;
        }
    }

    @Test
    void aCollectionWhoseLockLapsedDeletesNothingMore() {
        var ticks = new AtomicLong();
        var collector = new ContentStore(faulty, CONFIG, Clock.systemUTC(), "host-b", ticks::get);
        var garbage = collector.put(TestData.random(8, 200_000)).manifest();
        assertThatThrownBy(() -> collector.gc(Set::of, step -> {
            if (step.equals("gc.marked")) ticks.addAndGet(CONFIG.locks().trustFor().toNanos() + 1); // stopped for that long
        })).isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.getMessage()).contains("lapsed"));
        assertThat(collector.exists(garbage)).isTrue();
        assertThat(backend.listAll(StoreLocks.PREFIX).count()).as("its lock is removed all the same").isZero();
    }

    /**
     * The race: three processes, each uploading records of streams (some keeping an earlier record's
     * stream, as an incremental checkpoint keeps its parents), deleting records, and collecting, all
     * at once with no grace period. Whatever interleaving happened, every stream a remaining record
     * names reads back whole.
     */
    @Test
    void threeProcessesUploadingAndCollectingAtOnceLoseNothingARecordNames() throws Exception {
        var processes = List.of(process("host-a", CONFIG), process("host-b", CONFIG), process("host-c", CONFIG));
        var shared = TestData.random(10, 400_000);
        Map<Integer, Set<ManifestId>> records = new ConcurrentHashMap<>();
        Map<ManifestId, byte[]> contents = new ConcurrentHashMap<>();
        var nextRecord = new AtomicInteger();
        var collected = new AtomicInteger();
        var busy = new AtomicInteger();
        var duringUploads = new AtomicInteger();
        var uploading = new CountDownLatch(processes.size());
        try (var pool = Executors.newFixedThreadPool(6)) {
            var workers = new ArrayList<Future<?>>();
            for (int p = 0; p < processes.size(); p++) {
                var store = processes.get(p);
                var random = new SplittableRandom(100 + p);
                workers.add(pool.submit(() -> { // uploads
                    for (int i = 0; i < 8; i++) {
                        byte[] data = shared.clone(); // mostly chunks other streams have: dedup across processes
                        System.arraycopy(TestData.random(random.nextLong(), 30_000), 0, data, random.nextInt(data.length - 30_000), 30_000);
                        try (var session = store.session()) {
                            var names = new HashSet<ManifestId>();
                            var earlier = List.copyOf(records.values());
                            if (!earlier.isEmpty() && random.nextBoolean()) {
                                var parent = earlier.get(random.nextInt(earlier.size())).iterator().next();
                                try {
                                    session.keep(parent);
                                    names.add(parent);
                                } catch (StasisException gone) {
                                    // its record was deleted and collected meanwhile: a full stream then
                                }
                            }
                            var put = session.put(data);
                            contents.put(put.manifest(), data);
                            names.add(put.manifest());
                            session.ensureHeld("write the record");
                            records.put(nextRecord.incrementAndGet(), Set.copyOf(names));
                        }
                        if (random.nextInt(3) == 0 && !records.isEmpty()) records.remove(random.nextInt(1, nextRecord.get() + 1));
                        pauseBriefly(); // a window for the collections
                    }
                    uploading.countDown();
                    return null;
                }));
                workers.add(pool.submit(() -> { // collections, from the same process, until the uploads end and one ran
                    int ran = 0;
                    while (uploading.getCount() > 0 || ran == 0) {
                        try {
                            boolean during = uploading.getCount() > 0;
                            store.gc(() -> liveOf(records), step -> { });
                            ran++;
                            collected.incrementAndGet();
                            if (during) duringUploads.incrementAndGet();
                        } catch (StasisException e) {
                            if (e.code() != ErrorCode.STORE_BUSY) throw e;
                            busy.incrementAndGet();
                        }
                        pauseBriefly();
                    }
                    return null;
                }));
            }
            for (var w : workers) w.get(300, TimeUnit.SECONDS);
        }
        log.atInfo().addKeyValue("collections", collected.get()).addKeyValue("duringUploads", duringUploads.get()).addKeyValue("backedOff", busy.get())
                .addKeyValue("records", records.size()).log("race finished");
        assertThat(collected.get()).as("collections that ran").isGreaterThanOrEqualTo(processes.size());
        assertThat(busy.get()).as("collections that backed off for another process's uploads").isPositive();
        var reader = processes.getFirst();
        for (var names : records.values())
            for (var id : names) assertThat(TestData.readAll(reader.open(id))).as("stream " + id).isEqualTo(contents.get(id));

        // And once quiet, one collection leaves exactly what the records name.
        reader.gc(() -> liveOf(records), step -> { });
        assertThat(reader.manifests()).isEqualTo(liveOf(records));
        assertThat(backend.listAll(StoreLocks.PREFIX).count()).isZero();
    }

    private static Set<ManifestId> liveOf(Map<Integer, Set<ManifestId>> records) {
        var live = new HashSet<ManifestId>();
        records.values().forEach(live::addAll);
        return live;
    }

    private static void await(CountDownLatch latch) {
        try {
            if (!latch.await(60, TimeUnit.SECONDS)) throw new AssertionError("gave up waiting");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** Lets the other processes' threads interleave; not a wait for a condition. */
    private static void pauseBriefly() {
        try {
            Thread.sleep(20);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
