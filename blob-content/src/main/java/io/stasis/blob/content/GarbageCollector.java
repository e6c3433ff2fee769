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
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Mark and sweep over the store, safe against puts running in the same process.
 *
 * <p>The rule, in order:
 * <ol>
 *   <li>Start a {@link Pins.Recording}; note {@code cutoff = now - grace}.</li>
 *   <li>Mark: list {@code manifests/}. Keep a manifest if it is in the live set or was written
 *       after the cutoff, and mark every chunk it lists (reading it, checking its hash). A kept
 *       manifest that cannot be read or is corrupt stops the collection before anything is
 *       deleted: it is better to keep garbage than to lose a chunk.</li>
 *   <li>Sweep manifests: delete the others, unless pinned (a put is writing the same stream).</li>
 *   <li>Sweep chunks: list {@code chunks/} and delete a chunk only if it is unmarked, older than
 *       the cutoff, and not pinned now or since step 1.</li>
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
    private final ReentrantLock running = new ReentrantLock();

    GarbageCollector(BlobStore store, Retrier retrier, Pins pins, Clock clock, Duration grace,
                     Function<ManifestId, List<ChunkRef>> reader) {
        this.store = store;
        this.retrier = retrier;
        this.pins = pins;
        this.clock = clock;
        this.grace = grace;
        this.reader = reader;
    }

    GcReport collect(Set<ManifestId> live) {
        running.lock();
        long started = System.nanoTime();
        try (Pins.Recording recording = pins.record()) {
            Instant cutoff = clock.instant().minus(grace);

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

            long freed = 0;
            int manifestsDeleted = 0;
            for (BlobInfo info : condemned) {
                if (delete(recording, info.key())) {
                    manifestsDeleted++;
                    freed += info.size();
                } else {
                    kept++;
                }
            }

            long chunksKept = 0;
            long spared = 0;
            long chunksDeleted = 0;
            for (BlobInfo info : listAll(Layout.CHUNKS)) {
                var id = Layout.chunkOf(info.key());
                if (id.isEmpty()) continue;
                if (marked.contains(id.get())) {
                    chunksKept++;
                } else if (!info.lastModified().isBefore(cutoff) || !delete(recording, info.key())) {
                    spared++;
                } else {
                    chunksDeleted++;
                    freed += info.size();
                }
            }

            var report = new GcReport(kept, manifestsDeleted, liveMissing, chunksKept, spared, chunksDeleted, freed,
                    Duration.ofNanos(System.nanoTime() - started));
            log.atInfo().addKeyValue("manifestsKept", kept).addKeyValue("manifestsDeleted", manifestsDeleted)
                    .addKeyValue("chunksKept", chunksKept).addKeyValue("chunksSpared", spared).addKeyValue("chunksDeleted", chunksDeleted)
                    .addKeyValue("bytesFreed", freed).addKeyValue("millis", report.took().toMillis()).log("gc finished");
            return report;
        } finally {
            running.unlock();
        }
    }

    private boolean delete(Pins.Recording recording, String key) {
        return pins.deleteIfUnpinned(recording, key, () -> retrier.run("gc delete", key, a -> { }, () -> store.delete(key)));
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
