package io.stasis.sdk;

/**
 * The blob store that durable checkpoints and volume syncs go to, from {@link StasisClient#blobs()}:
 * its usage and its garbage collection. Root key only.
 *
 * <pre>{@code
 * BlobGcReport report = root.blobs().gc();   // ConflictException (store_busy) while another instance uploads
 * }</pre>
 */
public final class Blobs {
    private final HttpTransport transport;

    Blobs(HttpTransport transport) {
        this.transport = transport;
    }

    /**
     * What the store holds (a listing of all of it: not for polling), who holds its locks, and the
     * last collection here.
     *
     * @throws ForbiddenException not the root key
     */
    public BlobStoreStatus status() {
        return transport.json(transport.call("GET", "/v1/blobs"), BlobStoreStatus.class);
    }

    /**
     * Collects the store's garbage now and waits for it: the streams no durable checkpoint and no
     * volume sync names, and the chunks only they used.
     *
     * @throws ConflictException  {@code store_busy}, nothing deleted: another instance uploads to or
     *                            collects in the store, or a collection runs here ({@code details.holders})
     * @throws ForbiddenException not the root key
     */
    public BlobGcReport gc() {
        return transport.json(transport.call("POST", "/v1/blobs/gc"), BlobGcReport.class);
    }
}
