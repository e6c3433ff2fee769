package io.stasis.blob.content;

import io.stasis.core.blob.Manifest;
import io.stasis.core.blob.ManifestId;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;

/**
 * One upload that may span several streams and end in a record of the caller's (a checkpoint's
 * descriptor): from {@link ContentStore#session()} to {@link #close()}, no collection deletes
 * what it stored or {@link #keep kept}.
 * <ul>
 *   <li>Against other processes sharing the backend, the session holds this process's shared
 *       store lock ({@link StoreLocks}): their collections back off meanwhile.</li>
 *   <li>Against this process's own collection, every key it stored or kept stays pinned
 *       ({@link Pins}) until it closes.</li>
 * </ul>
 * Run {@link #ensureHeld} right before writing the record that names the streams: it fails if the
 * lock lapsed, when another process may have collected. Not for concurrent use by several threads.
 */
public final class UploadSession implements AutoCloseable {
    private final Uploader uploader;
    private final Pins pins;
    private final StoreLocks.Lease lease;
    private final ContentStore reader;
    private final List<String> pinned = new ArrayList<>();
    private boolean closed;

    UploadSession(Uploader uploader, Pins pins, StoreLocks.Lease lease, ContentStore reader) {
        this.uploader = uploader;
        this.pins = pins;
        this.lease = lease;
        this.reader = reader;
    }

    /** {@link ContentStore#put(InputStream)} within the session: the stream stays uncollectable until it closes. */
    public PutResult put(InputStream content) {
        checkOpen();
        return uploader.put(content, this::pin, lease);
    }

    public PutResult put(byte[] content) {
        return put(new ByteArrayInputStream(content));
    }

    /**
     * Makes a stream stored earlier uncollectable until the session closes (an incremental stream's
     * parents, which the record will name again).
     * <p>On failure: {@code not_found} if it is gone already (a collection removed it), or the
     * errors of {@link ContentStore#manifest}; then it is not kept.
     */
    public Manifest keep(ManifestId id) {
        checkOpen();
        // Pin first, then read: if the read finds the manifest, no collection deletes it from now
        // on, and the collector marks the chunks of every manifest it spares for a pin.
        pin(Layout.manifestKey(id));
        return reader.manifest(id);
    }

    /** Fails with {@code runtime_failed} if the store lock lapsed since the session began. */
    public void ensureHeld(String step) {
        checkOpen();
        lease.ensureHeld(step);
    }

    private void pin(String key) {
        pins.pin(key);
        pinned.add(key);
    }

    private void checkOpen() {
        if (closed) throw new IllegalStateException("the upload session is closed");
    }

    /** Unpins what the session stored and kept, and leaves the shared lock. */
    @Override
    public void close() {
        if (closed) return;
        closed = true;
        for (String key : pinned) pins.unpin(key);
        lease.release();
    }
}
