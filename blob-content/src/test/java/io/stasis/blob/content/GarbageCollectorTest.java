package io.stasis.blob.content;

import static io.stasis.blob.content.FaultyBlobStore.Op.LIST;
import static io.stasis.blob.content.FaultyBlobStore.Op.PUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.blob.content.FaultyBlobStore.Gate;
import io.stasis.blob.content.FaultyBlobStore.SimulatedCrash;
import io.stasis.blob.local.LocalBlobStore;
import io.stasis.core.blob.ChunkId;
import io.stasis.core.blob.ChunkRef;
import io.stasis.core.blob.FastCdc;
import io.stasis.core.blob.Manifest;
import io.stasis.core.blob.ManifestCodec;
import io.stasis.core.blob.ManifestId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.testkit.MutableClock;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The GC keeps what is live or young and removes the rest, and never takes a chunk from an upload
 * in flight. The races are made deterministic with gates: each test holds one side at the exact
 * point where a naive collector would lose data, runs the other side, then lets go.
 */
class GarbageCollectorTest {
    private static final FastCdc SMALL = new FastCdc(4096, 16384, 65536);
    private static final ContentStoreConfig CONFIG = ContentStoreConfig.DEFAULT.withChunker(SMALL)
            .withRetry(new RetryPolicy(3, Duration.ofMillis(1), Duration.ofMillis(2)));
    /** No grace at all: only the pins stand between an upload in flight and the GC. */
    private static final ContentStoreConfig NO_GRACE = CONFIG.withGcGrace(Duration.ZERO);

    @TempDir
    Path dir;
    private LocalBlobStore real;
    private FaultyBlobStore faulty;
    private final MutableClock clock = new MutableClock();

    @BeforeEach
    void open() {
        real = new LocalBlobStore(dir);
        faulty = new FaultyBlobStore(real);
    }

    @AfterEach
    void close() {
        real.close();
    }

    @Test
    void liveStreamsKeepTheirChunksAndTheRestGoesOnceOld() {
        var store = new ContentStore(real, CONFIG, clock);
        byte[] a = TestData.random(1, 400_000);
        byte[] b = Arrays.copyOf(a, 600_000); // shares its first 400 kB with a
        System.arraycopy(TestData.random(2, 200_000), 0, b, 400_000, 200_000);
        ManifestId idA = store.put(a).manifest();
        PutResult putB = store.put(b);

        clock.advance(CONFIG.gcGrace().plusMinutes(1));
        GcReport report = store.gc(Set.of(idA));

        assertThat(report.manifestsKept()).isEqualTo(1);
        assertThat(report.manifestsDeleted()).isEqualTo(1);
        assertThat(report.chunksDeleted()).isEqualTo(putB.newChunks());
        assertThat(report.bytesFreed()).isPositive();
        assertThat(TestData.readAll(store.open(idA))).isEqualTo(a);
        assertThatThrownBy(() -> store.open(putB.manifest())).isInstanceOfSatisfying(StasisException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_FOUND));
        assertThat(store.usage().chunks()).isEqualTo(store.chunks(idA).stream().map(ChunkRef::id).distinct().count());
    }

    @Test
    void unreferencedStreamsYoungerThanTheGracePeriodAreKept() {
        var store = new ContentStore(real, CONFIG, clock);
        ManifestId id = store.put(TestData.random(3, 200_000)).manifest();
        GcReport young = store.gc(Set.of());
        assertThat(young.manifestsDeleted()).isZero();
        assertThat(young.chunksDeleted()).isZero();
        assertThat(store.exists(id)).isTrue();

        clock.advance(CONFIG.gcGrace().plusSeconds(1));
        GcReport old = store.gc(Set.of());
        assertThat(old.manifestsDeleted()).isEqualTo(1);
        assertThat(store.usage()).isEqualTo(new StoreUsage(0, 0, 0));
    }

    @Test
    void keysTheStoreDidNotMakeAreNeverDeleted() {
        var store = new ContentStore(real, CONFIG, clock);
        for (String key : List.of("chunks/zz/not-a-hash", "chunks/ab/" + "0".repeat(64), "manifests/readme", "other/thing"))
            real.put(key, new byte[] {1});
        clock.advance(Duration.ofDays(30));
        store.gc(Set.of());
        assertThat(real.listAll("").count()).isEqualTo(4);
    }

    @Test
    void aCorruptLiveManifestStopsTheCollectionBeforeAnythingIsDeleted() {
        var store = new ContentStore(real, CONFIG, clock);
        ManifestId live = store.put(TestData.random(4, 200_000)).manifest();
        store.put(TestData.random(5, 200_000));
        long objects = real.listAll("").count();
        real.put(Layout.manifestKey(live), new byte[] {'S', 'T', 'M', 'F'});

        clock.advance(Duration.ofDays(1));
        assertThatThrownBy(() -> store.gc(Set.of(live))).isInstanceOfSatisfying(StasisException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL));
        assertThat(real.listAll("").count()).isEqualTo(objects);
    }

    @Test
    void liveIdsWithoutAManifestAreReportedNotFatal() {
        var store = new ContentStore(real, CONFIG, clock);
        ManifestId absent = ManifestId.of(new byte[] {42});
        assertThat(store.gc(Set.of(absent)).liveMissing()).isEqualTo(1);
    }

    @Test
    void anUploadWaitingToWriteItsManifestKeepsItsChunksThroughAGc() throws Exception {
        var store = new ContentStore(faulty, NO_GRACE, clock);
        byte[] data = TestData.random(6, 500_000);
        var beforeManifest = new Gate(PUT, "manifests/");
        faulty.with(beforeManifest);
        try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
            Future<PutResult> upload = pool.submit(() -> store.put(data));
            GcReport report;
            try {
                beforeManifest.awaitReached(); // every chunk is stored, the manifest is not
                report = store.gc(Set.of());
            } finally {
                beforeManifest.release();
            }
            assertThat(report.chunksDeleted()).isZero();
            assertThat(report.chunksSpared()).isEqualTo(real.listAll("chunks/").count()).isPositive();
            PutResult put = upload.get(60, TimeUnit.SECONDS);
            assertThat(TestData.readAll(store.open(put.manifest()))).isEqualTo(data);
        }
    }

    @Test
    void anUploadReusingUnreferencedChunksWhileTheGcSweepsKeepsThem() throws Exception {
        byte[] data = TestData.random(7, 500_000);
        // A crashed upload left the stream's chunks without a manifest: garbage, as far as any GC can tell.
        faulty.with(FaultyBlobStore.crashAt(PUT, "manifests/", 1));
        assertThatThrownBy(() -> new ContentStore(faulty, NO_GRACE, clock, "host-a").put(data)).isInstanceOf(SimulatedCrash.class);
        faulty.clearHooks();
        long orphans = real.listAll("chunks/").count();

        var store = new ContentStore(faulty, NO_GRACE, clock, "host-a");
        store.clearOwnLocks();
        var chunksListed = new Gate(LIST, "chunks/");
        faulty.with(chunksListed);
        try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
            Future<GcReport> gc = pool.submit(() -> store.gc(Set.of()));
            PutResult put;
            try {
                chunksListed.awaitReached(); // the GC marked nothing and holds every orphan as a candidate
                put = store.put(data); // finds every chunk stored, uploads none, writes its manifest
            } finally {
                chunksListed.release();
            }
            assertThat(put.newChunks()).isZero();
            GcReport report = gc.get(60, TimeUnit.SECONDS);
            assertThat(report.chunksDeleted()).isZero();
            assertThat(report.chunksSpared()).isEqualTo(orphans);
            assertThat(TestData.readAll(store.open(put.manifest()))).isEqualTo(data);
        }
    }

    @Test
    void withoutAConcurrentUploadTheSameOrphansAreCollected() {
        byte[] data = TestData.random(7, 500_000);
        faulty.with(FaultyBlobStore.crashAt(PUT, "manifests/", 1));
        assertThatThrownBy(() -> new ContentStore(faulty, NO_GRACE, clock, "host-a").put(data)).isInstanceOf(SimulatedCrash.class);
        long orphans = real.listAll("chunks/").count();
        clock.advance(Duration.ofSeconds(1));
        var restarted = new ContentStore(real, NO_GRACE, clock, "host-a");
        restarted.clearOwnLocks();
        assertThat(restarted.gc(Set.of()).chunksDeleted()).isEqualTo(orphans);
    }

    @Test
    void manyUploadsAndCollectionsAtOnceLoseNothingLive() throws Exception {
        var store = new ContentStore(real, NO_GRACE.withUploadConcurrency(3), clock);
        var random = new SplittableRandom(8);
        byte[] base = TestData.random(9, 300_000);
        var streams = new ArrayList<byte[]>();
        for (int i = 0; i < 24; i++) {
            byte[] s = base.clone(); // all share most chunks, so uploads keep finding each other's
            int at = random.nextInt(s.length - 20_000);
            System.arraycopy(TestData.random(random.nextLong(), 20_000), 0, s, at, 20_000);
            streams.add(s);
        }
        Set<ManifestId> live = ConcurrentHashMap.newKeySet();
        var finished = new Semaphore(0);
        int collections;
        try (var pool = Executors.newFixedThreadPool(4)) {
            Future<Integer> collector = pool.submit(() -> { // one collection per finished put, while the others run
                for (int runs = 0; runs < streams.size(); runs++) {
                    finished.acquire();
                    store.gc(() -> Set.copyOf(live), step -> { }); // read once the store is locked, as the service does
                }
                return streams.size();
            });
            var uploads = new ArrayList<Future<?>>();
            for (int t = 0; t < 3; t++) {
                int first = t;
                uploads.add(pool.submit(() -> {
                    for (int i = first; i < streams.size(); i += 3) {
                        byte[] s = streams.get(i);
                        boolean keep = i % 4 != 3; // every fourth stream is garbage at once
                        if (keep) live.add(idOf(s)); // live before its put starts, as a catalog row would be
                        store.put(s);
                        finished.release();
                    }
                }));
            }
            for (var u : uploads) u.get(120, TimeUnit.SECONDS);
            collections = collector.get(120, TimeUnit.SECONDS);
        }
        assertThat(collections).isPositive();
        for (int i = 0; i < streams.size(); i++)
            if (i % 4 != 3) assertThat(TestData.readAll(store.open(idOf(streams.get(i))))).as("stream " + i).isEqualTo(streams.get(i));

        clock.advance(Duration.ofSeconds(1));
        store.gc(live);
        var needed = new HashSet<ChunkId>();
        for (ManifestId id : live) store.chunks(id).forEach(c -> needed.add(c.id()));
        assertThat(store.usage()).isEqualTo(new StoreUsage(live.size(), needed.size(), store.usage().storedBytes()));
    }

    /** A stream's manifest id from its bytes alone, with the core's chunker and codec: no store involved. */
    private static ManifestId idOf(byte[] data) {
        var refs = new ArrayList<ChunkRef>();
        try {
            SMALL.split(new ByteArrayInputStream(data), (buf, off, len) -> refs.add(new ChunkRef(ChunkId.of(buf, off, len), len)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return ManifestId.of(ManifestCodec.encode(new Manifest(refs)));
    }
}
