package io.stasis.blob.content;

import io.stasis.core.blob.ChunkRef;
import io.stasis.core.blob.Manifest;
import io.stasis.core.blob.ManifestCodec;
import io.stasis.core.blob.ManifestId;
import io.stasis.core.spi.BlobInfo;
import io.stasis.core.spi.BlobStore;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * Content-addressed storage of streams on any {@link BlobStore}: the layer that checkpoints (btrfs
 * send streams, CRIU images) and volumes store through.
 *
 * <p>A stream is cut into chunks by content ({@link io.stasis.core.blob.FastCdc}); each chunk is
 * named by its SHA-256, compressed with zstd and stored once, however many streams contain it; a
 * manifest lists the chunks in order, and the SHA-256 of the manifest names the stream. Keys:
 * {@code chunks/xx/<sha256>} and {@code manifests/<sha256>}.
 *
 * <p><b>Atomicity</b>: a put writes its chunks first and the manifest last, so a stream is visible
 * only once all of it is stored; a put that fails or dies half-way leaves only unreferenced chunks,
 * which the GC removes. Backend calls that fail for a passing reason are retried with backoff.
 *
 * <p><b>Reads are verified</b>: the manifest against its id, every chunk against its size and
 * SHA-256. A mismatch is an {@code internal} error naming the stream and chunk; wrong bytes are
 * never returned.
 *
 * <p><b>Live streams are named by the caller</b>: {@link #gc(Set)} takes the set of manifests to
 * keep (for checkpoints, the catalog's), rather than the store keeping references of its own that
 * could disagree with the catalog. See {@link GarbageCollector} for the rule that makes a GC safe
 * while puts run.
 *
 * <p><b>Processes sharing the backend</b> coordinate through lock objects in it
 * ({@link StoreLocks}): uploads hold a shared lock, a GC an exclusive one, and a GC backs off
 * rather than collect while another process uploads.
 *
 * <p>Thread-safe. Use one instance per backend location in a process: uploads and the GC of one
 * process coordinate through it (its pins).
 */
public final class ContentStore {
    private final BlobStore store;
    private final ContentStoreConfig config;
    private final ChunkCodec codec;
    private final Retrier retrier;
    private final Uploader uploader;
    private final Pins pins = new Pins();
    private final StoreLocks locks;
    private final GarbageCollector collector;

    /**
     * @param holder this process's name in the store's lock objects ({@link StoreLocks}): unique
     *               among the processes sharing the backend, the same after a restart (1-64 of
     *               {@code [A-Za-z0-9_-]})
     */
    public ContentStore(BlobStore store, ContentStoreConfig config, Clock clock, String holder) {
        this(store, config, clock, holder, System::nanoTime);
    }

    ContentStore(BlobStore store, ContentStoreConfig config, Clock clock, String holder, LongSupplier ticker) {
        this.store = Objects.requireNonNull(store, "store");
        this.config = Objects.requireNonNull(config, "config");
        this.codec = new ChunkCodec(config.compressionLevel());
        this.retrier = new Retrier(config.retry());
        this.locks = new StoreLocks(store, holder, config.locks(), retrier, ticker, clock);
        this.uploader = new Uploader(store, config, codec, retrier);
        this.collector = new GarbageCollector(store, retrier, pins, clock, config.gcGrace(), id -> manifest(id).chunks(), locks,
                config.uploadConcurrency());
    }

    /** A store whose holder name is random: for tools and tests that never restart as the same holder. */
    public ContentStore(BlobStore store, ContentStoreConfig config, Clock clock) {
        this(store, config, clock, randomHolder());
    }

    public ContentStore(BlobStore store) {
        this(store, ContentStoreConfig.DEFAULT, Clock.systemUTC());
    }

    private static String randomHolder() {
        return "anon-" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
    }

    /**
     * Removes the lock objects an earlier run of this holder left when it died, so that other
     * processes need not wait for them to go stale. Call once at start, before any put or GC.
     */
    public void clearOwnLocks() {
        locks.clearOwn();
    }

    /** The lock objects of every process sharing the backend (what a {@code store_busy} was about). */
    public List<StoreLocks.LockInfo> locks() {
        return locks.list();
    }

    /**
     * Opens an upload of one or more streams (see {@link UploadSession}): waits while another
     * process sharing the backend collects (up to {@link LockTiming#maxWait()}, then
     * {@code store_busy}). Close it once the record naming its streams is written.
     */
    public UploadSession session() {
        return new UploadSession(uploader, pins, locks.acquireShared(), this);
    }

    /**
     * Stores a stream, reading it to its end (the caller closes it).
     * <p>Effects on success: the stream can be opened by the returned manifest id; chunks the
     * store already had were not uploaded again. Add the id to the GC's live set within the grace
     * period.
     * <p>On failure: {@code runtime_failed} when the backend kept failing, or the stream's own
     * exception; no manifest is written, so nothing is visible.
     */
    public PutResult put(InputStream content) {
        try (var session = session()) {
            return session.put(content);
        }
    }

    /** {@link #put(InputStream)} for bytes at hand. */
    public PutResult put(byte[] content) {
        return put(new ByteArrayInputStream(content));
    }

    /**
     * The stored stream, fetched lazily and checked chunk by chunk. Close it.
     * <p>On failure: {@code not_found} if there is no such manifest, {@code internal} if the
     * manifest is corrupt (at once) or a chunk is missing or corrupt (when the read reaches it).
     * A stream must stay in the GC's live set while it is read.
     */
    public InputStream open(ManifestId id) {
        return new ChunkStream(id, manifest(id), store, codec, retrier, config.uploadConcurrency());
    }

    /** The stored stream's manifest, checked against its id. Errors as {@link #open}. */
    public Manifest manifest(ManifestId id) {
        String key = Layout.manifestKey(id);
        byte[] encoded = retrier.call("get manifest", key, a -> { }, () -> {
            try (InputStream in = store.get(key).orElseThrow(() -> ContentErrors.manifestNotFound(id))) {
                return in.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException("reading " + key + " failed: " + e.getMessage(), e);
            }
        });
        if (!ManifestId.of(encoded).equals(id)) throw ContentErrors.corruptManifest(id, "its content does not hash to its id");
        try {
            return ManifestCodec.decode(encoded);
        } catch (IllegalArgumentException e) {
            throw ContentErrors.corruptManifest(id, e.getMessage());
        }
    }

    /** Whether a stream with this manifest is stored. */
    public boolean exists(ManifestId id) {
        String key = Layout.manifestKey(id);
        return retrier.call("head manifest", key, a -> { }, () -> store.exists(key));
    }

    /** Every stored stream (for reconciliation with the catalog). */
    public Set<ManifestId> manifests() {
        return store.listAll(Layout.MANIFESTS).map(i -> Layout.manifestOf(i.key())).flatMap(Optional::stream)
                .collect(Collectors.toUnmodifiableSet());
    }

    /**
     * Removes manifests that are neither in {@code live} nor younger than the grace period, then
     * chunks no remaining manifest refers to, sparing chunks of puts and sessions in flight. Safe to
     * run while puts and reads of live streams run, here and in other processes sharing the backend.
     * <p>{@code live} is called once the store is locked, so a record written before it is seen.
     * <p>On failure: {@code store_busy} (another process uploads or collects; nothing was done),
     * or an exception (the backend, the live set, a corrupt kept manifest, a lapsed lock) before any
     * chunk a kept manifest needs is deleted; running it again is safe.
     *
     * @param steps hears the name of each step as it is passed (fault points for crash tests)
     */
    public GcReport gc(Supplier<Set<ManifestId>> live, Consumer<String> steps) {
        return collector.collect(live, steps);
    }

    /**
     * {@link #gc(Supplier, Consumer)} with a live set at hand: taken before the collection locks the
     * store, so a stream recorded as live after that call began is protected only by the grace
     * period. Callers whose records change meanwhile pass a supplier instead.
     */
    public GcReport gc(Set<ManifestId> live) {
        var copy = Set.copyOf(live);
        return gc(() -> copy, step -> { });
    }

    /** Counts what the store holds by listing it: a scan, not for hot paths. */
    public StoreUsage usage() {
        long manifests = 0;
        long chunks = 0;
        long bytes = 0;
        for (BlobInfo info : (Iterable<BlobInfo>) store.listAll("")::iterator) {
            if (Layout.manifestOf(info.key()).isPresent()) manifests++;
            else if (Layout.chunkOf(info.key()).isPresent()) chunks++;
            else continue;
            bytes += info.size();
        }
        return new StoreUsage(manifests, chunks, bytes);
    }

    /** The chunks of a stored stream, in order, without fetching them. */
    public List<ChunkRef> chunks(ManifestId id) {
        return manifest(id).chunks();
    }

    @Override
    public String toString() {
        return "ContentStore[" + store + "]";
    }
}
