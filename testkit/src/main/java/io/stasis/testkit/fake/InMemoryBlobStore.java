package io.stasis.testkit.fake;

import io.stasis.core.spi.BlobInfo;
import io.stasis.core.spi.BlobPage;
import io.stasis.core.spi.BlobStore;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Optional;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * A {@link BlobStore} in memory, verified by {@code BlobStoreSuite}. Objects are immutable byte
 * arrays in a sorted map, so a put is atomic (the array is read whole before it replaces the old
 * one), a reader keeps the version it opened, and listings come in key order. A page token is the
 * last key of the page before.
 */
public final class InMemoryBlobStore implements BlobStore {
    private final ConcurrentNavigableMap<String, Blob> blobs = new ConcurrentSkipListMap<>();

    private record Blob(byte[] content, Instant lastModified) {
    }

    @Override
    public void put(String key, InputStream content, long length) {
        BlobStore.checkKey(key);
        if (length < 0) throw new IllegalArgumentException("length of " + key + " is negative: " + length);
        if (length > Integer.MAX_VALUE - 8) throw new IllegalArgumentException("an object in memory holds at most 2 GiB, " + key + " has " + length);
        byte[] bytes = readExactly(content, (int) length, key);
        // lastModified must move forward when an object is written again (the GC's grace period reads it)
        blobs.compute(key, (k, old) -> new Blob(bytes, old == null ? Instant.now() : later(Instant.now(), old.lastModified())));
    }

    @Override
    public Optional<InputStream> get(String key) {
        BlobStore.checkKey(key);
        return Optional.ofNullable(blobs.get(key)).map(blob -> new ByteArrayInputStream(blob.content()));
    }

    @Override
    public Optional<BlobInfo> head(String key) {
        BlobStore.checkKey(key);
        return Optional.ofNullable(blobs.get(key)).map(blob -> info(key, blob));
    }

    @Override
    public BlobPage list(String prefix, Optional<String> pageToken, int maxKeys) {
        BlobStore.checkPrefix(prefix);
        BlobStore.checkPageSize(maxKeys);
        pageToken.ifPresent(BlobStore::checkKey);
        var from = pageToken.isPresent() && pageToken.get().compareTo(prefix) >= 0
                ? blobs.tailMap(pageToken.get(), false) : blobs.tailMap(prefix, true);
        var page = new ArrayList<BlobInfo>();
        for (var entry : from.entrySet()) {
            if (!entry.getKey().startsWith(prefix)) break; // keys under a prefix are contiguous in sorted order
            if (page.size() == maxKeys) return new BlobPage(page, Optional.of(page.getLast().key()));
            page.add(info(entry.getKey(), entry.getValue()));
        }
        return new BlobPage(page, Optional.empty());
    }

    @Override
    public void delete(String key) {
        BlobStore.checkKey(key);
        blobs.remove(key);
    }

    @Override
    public String toString() {
        return "memory:" + blobs.size() + " objects";
    }

    private static BlobInfo info(String key, Blob blob) {
        return new BlobInfo(key, blob.content().length, blob.lastModified());
    }

    private static Instant later(Instant now, Instant previous) {
        return now.isAfter(previous) ? now : previous.plusNanos(1_000);
    }

    /** Exactly {@code length} bytes of {@code in}: a stream that ends early or runs long is refused, as LocalBlobStore refuses it. */
    private static byte[] readExactly(InputStream in, int length, String key) {
        try {
            byte[] bytes = in.readNBytes(length);
            if (bytes.length < length)
                throw new IOException("the stream for " + key + " ended after " + bytes.length + " of " + length + " bytes");
            if (in.read() >= 0) throw new IOException("the stream for " + key + " has more than the " + length + " bytes announced");
            return bytes;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
