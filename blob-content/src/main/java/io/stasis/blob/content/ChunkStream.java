package io.stasis.blob.content;

import io.stasis.core.blob.ChunkRef;
import io.stasis.core.blob.Manifest;
import io.stasis.core.blob.ManifestId;
import io.stasis.core.error.StasisException;
import io.stasis.core.spi.BlobStore;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayDeque;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * A stored stream read back: chunks fetched a few ahead, each decompressed and checked against
 * its manifest entry (size and SHA-256) before a byte of it is returned. A chunk that is missing
 * or does not match fails the read with {@code internal}, naming the stream, the chunk's index
 * and id: wrong bytes are never returned.
 */
final class ChunkStream extends InputStream {
    private final ManifestId id;
    private final Manifest manifest;
    private final BlobStore store;
    private final ChunkCodec codec;
    private final Retrier retrier;
    private final int ahead;
    private final ExecutorService fetchers = Executors.newVirtualThreadPerTaskExecutor();
    private final ArrayDeque<Future<byte[]>> pending = new ArrayDeque<>();
    private int nextToFetch;
    private byte[] current = new byte[0];
    private int position;
    private boolean closed;

    ChunkStream(ManifestId id, Manifest manifest, BlobStore store, ChunkCodec codec, Retrier retrier, int ahead) {
        this.id = id;
        this.manifest = manifest;
        this.store = store;
        this.codec = codec;
        this.retrier = retrier;
        this.ahead = ahead;
    }

    @Override
    public int read() throws IOException {
        byte[] one = new byte[1];
        return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        if (closed) throw new IOException("stream " + id + " is closed");
        if (len == 0) return 0;
        while (position == current.length) {
            if (!advance()) return -1;
        }
        int n = Math.min(len, current.length - position);
        System.arraycopy(current, position, b, off, n);
        position += n;
        return n;
    }

    @Override
    public long skip(long n) throws IOException {
        long skipped = 0;
        while (skipped < n) {
            if (position == current.length && !advance()) break;
            int step = (int) Math.min(n - skipped, current.length - position);
            position += step;
            skipped += step;
        }
        return skipped;
    }

    @Override
    public int available() {
        return current.length - position;
    }

    @Override
    public void close() {
        if (closed) return;
        closed = true;
        for (var f : pending) f.cancel(true);
        pending.clear();
        fetchers.shutdownNow();
    }

    private boolean advance() throws IOException {
        while (pending.size() < ahead && nextToFetch < manifest.chunks().size()) {
            int index = nextToFetch++;
            pending.add(fetchers.submit(() -> fetch(index)));
        }
        Future<byte[]> next = pending.poll();
        if (next == null) return false;
        try {
            current = next.get();
            position = 0;
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while reading stream " + id, e);
        } catch (CancellationException e) {
            throw new IOException("stream " + id + " was closed while reading", e);
        } catch (ExecutionException e) {
            close();
            switch (e.getCause()) {
                case StasisException s -> throw s;
                case RuntimeException r -> throw r;
                case Error err -> throw err;
                case Throwable t -> throw new IOException("reading stream " + id + " failed", t);
            }
        }
    }

    private byte[] fetch(int index) {
        ChunkRef ref = manifest.chunks().get(index);
        String key = Layout.chunkKey(ref.id());
        byte[] stored = retrier.call("get chunk", key, a -> { }, () -> {
            try (InputStream in = store.get(key).orElseThrow(() -> ContentErrors.missingChunk(id, index, ref.id()))) {
                int limit = codec.maxStoredSize(ref);
                byte[] bytes = in.readNBytes(limit + 1);
                if (bytes.length > limit) throw ContentErrors.corruptChunk(id, index, ref.id(), "it is larger than any frame of its size");
                return bytes;
            } catch (IOException e) {
                throw new UncheckedIOException("reading " + key + " failed: " + e.getMessage(), e);
            }
        });
        try {
            return codec.decompress(stored, ref);
        } catch (IllegalArgumentException e) {
            throw ContentErrors.corruptChunk(id, index, ref.id(), e.getMessage());
        }
    }
}
