package io.stasis.blob.content;

import io.stasis.core.blob.ChunkId;
import io.stasis.core.blob.ChunkRef;
import io.stasis.core.blob.Manifest;
import io.stasis.core.blob.ManifestCodec;
import io.stasis.core.blob.ManifestId;
import io.stasis.core.spi.BlobStore;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One put: cut the stream, and for each distinct chunk pin it, skip it if the store has it, else
 * compress and upload it (several at once); then, only if every chunk is stored, write the
 * manifest. Until that last write nothing refers to the new chunks, so a put that fails or dies
 * half-way leaves no stream anybody can see, only chunks the GC will collect.
 */
final class Uploader {
    private static final Logger log = LoggerFactory.getLogger(Uploader.class);

    private final BlobStore store;
    private final ContentStoreConfig config;
    private final ChunkCodec codec;
    private final Retrier retrier;

    Uploader(BlobStore store, ContentStoreConfig config, ChunkCodec codec, Retrier retrier) {
        this.store = store;
        this.config = config;
        this.codec = codec;
        this.retrier = retrier;
    }

    /**
     * Stores one stream. Keys are pinned through {@code pin} (the session unpins them when it
     * closes); {@code lease} is checked before the manifest, the put's commit, is written.
     */
    PutResult put(InputStream content, Consumer<String> pin, StoreLocks.Lease lease) {
        long started = System.nanoTime();
        var refs = new ArrayList<ChunkRef>();
        var failure = new AtomicReference<Throwable>();
        var newChunks = new AtomicInteger();
        var newLogical = new AtomicLong();
        var stored = new AtomicLong();
        var retries = new AtomicInteger();
        var window = new Semaphore(config.uploadConcurrency());
        long logical = 0;
        try (ExecutorService workers = Executors.newVirtualThreadPerTaskExecutor()) {
            var seen = new HashSet<ChunkId>();
            try {
                logical = config.chunker().split(content, (buf, off, len) -> {
                    rethrowIfFailed(failure);
                    byte[] data = Arrays.copyOfRange(buf, off, off + len);
                    ChunkId id = ChunkId.of(data);
                    refs.add(new ChunkRef(id, len));
                    if (!seen.add(id)) return;
                    String key = Layout.chunkKey(id);
                    pin.accept(key);
                    acquire(window, failure);
                    workers.execute(() -> {
                        try {
                            long written = storeChunk(key, data, retries);
                            if (written > 0) {
                                newChunks.incrementAndGet();
                                newLogical.addAndGet(len);
                                stored.addAndGet(written);
                            }
                        } catch (Throwable t) {
                            failure.compareAndSet(null, t);
                        } finally {
                            window.release();
                        }
                    });
                });
            } catch (IOException e) {
                failure.compareAndSet(null, new UncheckedIOException("reading the stream to store failed: " + e.getMessage(), e));
            } catch (RuntimeException | Error e) {
                failure.compareAndSet(null, e);
            }
        } // waits for the uploads in flight
        rethrowIfFailed(failure);

        byte[] encoded = ManifestCodec.encode(new Manifest(refs));
        var id = ManifestId.of(encoded);
        String key = Layout.manifestKey(id);
        pin.accept(key);
        lease.ensureHeld("write manifest " + id);
        retrier.run("put manifest", key, a -> retries.incrementAndGet(), () -> store.put(key, encoded));
        stored.addAndGet(encoded.length);

        var result = new PutResult(id, logical, refs.size(), newChunks.get(), newLogical.get(), stored.get(), retries.get());
        log.atInfo().addKeyValue("manifest", id).addKeyValue("bytes", logical).addKeyValue("chunks", refs.size())
                .addKeyValue("newChunks", result.newChunks()).addKeyValue("storedBytes", result.storedBytes())
                .addKeyValue("retries", result.retries()).addKeyValue("millis", (System.nanoTime() - started) / 1_000_000)
                .log("stream stored");
        return result;
    }

    /** Uploads one chunk unless the store has it. Returns the bytes written, 0 if it was there. */
    private long storeChunk(String key, byte[] data, AtomicInteger retries) {
        if (retrier.call("head chunk", key, a -> retries.incrementAndGet(), () -> store.head(key)).isPresent()) return 0;
        byte[] compressed = codec.compress(data);
        retrier.run("put chunk", key, a -> retries.incrementAndGet(), () -> store.put(key, compressed));
        return compressed.length;
    }

    /** Waits for room in the upload window; gives up if an upload failed meanwhile. */
    private static void acquire(Semaphore window, AtomicReference<Throwable> failure) {
        try {
            window.acquire();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failure.compareAndSet(null, ContentErrors.interrupted("put", "stream"));
            rethrowIfFailed(failure);
        }
        if (failure.get() != null) {
            window.release();
            rethrowIfFailed(failure);
        }
    }

    private static void rethrowIfFailed(AtomicReference<Throwable> failure) {
        switch (failure.get()) {
            case null -> { }
            case RuntimeException e -> throw e;
            case Error e -> throw e;
            case Throwable t -> throw new IllegalStateException(t);
        }
    }
}
