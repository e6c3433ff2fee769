package io.stasis.blob.content;

import io.stasis.core.blob.ChunkId;
import io.stasis.core.blob.ChunkRef;
import io.stasis.core.blob.ManifestId;
import io.stasis.core.spi.BlobInfo;
import io.stasis.core.spi.BlobStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Mark and sweep over the store, safe against puts running in this process and in every other
 * process that shares the backend.
 *
 * <p>The rule, in order:
 * <ol>
 *   <li>Take the store's exclusive lock ({@link StoreLocks}): if another process uploads or
 *       collects, do nothing and fail with {@code store_busy}. Every delete below first checks
 *       that the lock is still held.</li>
 *   <li>Start a {@link Pins.Recording}; note {@code cutoff = now - grace}; only then ask the
 *       caller for the live set (if that fails, nothing is deleted).</li>
 *   <li>Mark: list {@code manifests/}. Keep a manifest if it is in the live set or was written
 *       after the cutoff, and mark every chunk it lists (reading it, checking its hash). A kept
 *       manifest that cannot be read or is corrupt stops the collection before anything is
 *       deleted: it is better to keep garbage than to lose a chunk.</li>
 *   <li>Sweep manifests: delete the others, unless pinned (a put is writing the same stream, or
 *       a session keeps it); a manifest spared for a pin has its chunks marked too.</li>
 *   <li>Sweep chunks: list {@code chunks/} and delete a chunk only if it is unmarked, older than
 *       the cutoff, and not pinned now or since step 2 (several deletes at once).</li>
 * </ol>
 * Keys this store did not make are never deleted. One collection runs at a time.
 *
 * <p>What protects what: pins protect a put in flight however long it takes, including chunks it
 * found already stored (see {@link Pins}); the grace period protects a manifest between
 * {@code put} returning and the caller adding it to its live set, and, as a second line, chunks
 * of puts by other processes sharing the backend. Puts in another process that reuse an old
 * unreferenced chunk are not protected: run one GC-ing store per backend location.
 */
final class GarbageCollector {
    private static final Logger log = LoggerFactory.getLogger(GarbageCollector.class);

    private final BlobStore store;
    private final Retrier retrier;
    private final Pins pins;
    private final Clock clock;
    private final Duration grace;
    private final Function<ManifestId, List<ChunkRef>> reader;
    private final StoreLocks locks;
    private final int concurrency;
    private final ReentrantLock running = new ReentrantLock();

    GarbageCollector(BlobStore store, Retrier retrier, Pins pins, Clock clock, Duration grace,
                     Function<ManifestId, List<ChunkRef>> reader, StoreLocks locks, int concurrency) {
        this.locks = locks;
        this.concurrency = concurrency;
        this.store = store;
        this.retrier = retrier;
        this.pins = pins;
        this.clock = clock;
        this.grace = grace;
        this.reader = reader;
    }

    /**
     * One collection. {@code live} is asked for the live set only once the store is locked and
     * pins are recorded, so that nothing written before it can be missed; if it throws, nothing is
     * deleted. {@code steps} hears of each step ({@code gc.locked}, {@code gc.marked},
     * {@code gc.manifest-deleted}, {@code gc.chunk-deleted}): the crash tests' fault points.
     */
    GcReport collect(Supplier<Set<ManifestId>> live, Consumer<String> steps) {
        if (!running.tryLock())
            throw new StasisException(ErrorCode.STORE_BUSY, "a collection of this blob store is already running in this instance",
                    Map.of("holders", List.of(locks.holder())));
        long started = System.nanoTime();
        StoreLocks.Lease lease = null;
        try {
            lease = locks.acquireExclusive();
            steps.accept("gc.locked");
            return collect(live, steps, lease, started);
        } finally {
            if (lease != null) lease.release();
            running.unlock();
        }
    }

    private GcReport collect(Supplier<Set<ManifestId>> liveSet, Consumer<String> steps, StoreLocks.Lease lease, long started) {
        try (Pins.Recording recording = pins.record()) {
            Instant cutoff = clock.instant().minus(grace);
            Set<ManifestId> live = Set.copyOf(liveSet.get());

            var marked = new HashSet<ChunkId>();
            var condemned = new ArrayList<BlobInfo>();
            var seenLive = new HashSet<ManifestId>();
            int kept = 0;
            for (BlobInfo info : listAll(Layout.MANIFESTS)) {
                var id = Layout.manifestOf(info.key());
                if (id.isEmpty()) continue;
                if (live.contains(id.get()) || !info.lastModified().isBefore(cutoff)) {
                    for (ChunkRef ref : reader.apply(id.get())) marked.add(ref.id());
                    if (live.contains(id.get())) seenLive.add(id.get());
                    kept++;
                } else {
                    condemned.add(info);
                }
            }
            int liveMissing = live.size() - seenLive.size();
            if (liveMissing > 0)
                log.atWarn().addKeyValue("missing", live.stream().filter(m -> !seenLive.contains(m)).limit(10).toList())
                        .addKeyValue("count", liveMissing).log("gc: live manifests not in the store");

            steps.accept("gc.marked");

            long freed = 0;
            int manifestsDeleted = 0;
            for (BlobInfo info : condemned) {
                if (delete(recording, lease, info.key())) {
                    manifestsDeleted++;
                    freed += info.size();
                    steps.accept("gc.manifest-deleted");
                } else {
                    // Pinned by a put or a session's keep: it stays, and so must its chunks.
                    for (ChunkRef ref : reader.apply(Layout.manifestOf(info.key()).orElseThrow())) marked.add(ref.id());
                    kept++;
                }
            }

            long chunksKept = 0;
            var spared = new AtomicLong();
            var chunksDeleted = new AtomicLong();
            var chunkBytesFreed = new AtomicLong();
            var failure = new AtomicReference<Throwable>();
            // Deletes run several at once (one backend round trip each: serial, a large sweep on S3 would take hours).
            var window = new Semaphore(concurrency);
            try (ExecutorService workers = Executors.newVirtualThreadPerTaskExecutor()) {
                for (BlobInfo info : listAll(Layout.CHUNKS)) {
                    var id = Layout.chunkOf(info.key());
                    if (id.isEmpty()) continue;
                    if (marked.contains(id.get())) {
                        chunksKept++;
                        continue;
                    }
                    if (!info.lastModified().isBefore(cutoff)) {
                        spared.incrementAndGet();
                        continue;
                    }
                    window.acquireUninterruptibly();
                    if (failure.get() != null) {
                        window.release();
                        break;
                    }
                    workers.execute(() -> {
                        try {
                            if (!delete(recording, lease, info.key())) {
                                spared.incrementAndGet();
                                return;
                            }
                            chunksDeleted.incrementAndGet();
                            chunkBytesFreed.addAndGet(info.size());
                            steps.accept("gc.chunk-deleted");
                        } catch (RuntimeException | Error e) {
                            failure.compareAndSet(null, e);
                        } finally {
                            window.release();
                        }
                    });
                }
            } // waits for the deletes in flight
            switch (failure.get()) {
                case null -> { }
                case RuntimeException e -> throw e;
                case Error e -> throw e;
                case Throwable t -> throw new IllegalStateException(t);
            }
            freed += chunkBytesFreed.get();

            var report = new GcReport(kept, manifestsDeleted, liveMissing, chunksKept, spared.get(), chunksDeleted.get(), freed,
                    Duration.ofNanos(System.nanoTime() - started));
            log.atInfo().addKeyValue("manifestsKept", kept).addKeyValue("manifestsDeleted", manifestsDeleted)
                    .addKeyValue("chunksKept", chunksKept).addKeyValue("chunksSpared", spared).addKeyValue("chunksDeleted", chunksDeleted)
                    .addKeyValue("bytesFreed", freed).addKeyValue("millis", report.took().toMillis()).log("gc finished");
            return report;
        }
    }

    private boolean delete(Pins.Recording recording, StoreLocks.Lease lease, String key) {
        return pins.deleteIfUnpinned(recording, key, () -> {
            lease.ensureHeld("gc delete " + key);
            retrier.run("gc delete", key, a -> { }, () -> store.delete(key));
        });
    }

    /** Lists lazily, page by page, each page retried on a passing failure. */
    private Iterable<BlobInfo> listAll(String prefix) {
        return () -> new Iterator<>() {
            private Iterator<BlobInfo> page = Collections.emptyIterator();
            private Optional<String> token = Optional.empty();
            private boolean last;

            @Override
            public boolean hasNext() {
                while (!page.hasNext() && !last) {
                    var p = retrier.call("gc list", prefix, a -> { }, () -> store.list(prefix, token, 1000));
                    page = p.blobs().iterator();
                    token = p.nextPageToken();
                    last = token.isEmpty();
                }
                return page.hasNext();
            }

            @Override
            public BlobInfo next() {
                if (!hasNext()) throw new NoSuchElementException();
                return page.next();
            }
        };
    }
}
