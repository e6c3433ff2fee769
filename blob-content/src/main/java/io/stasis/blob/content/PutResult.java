package io.stasis.blob.content;

import io.stasis.core.blob.ManifestId;

/**
 * What one {@link ContentStore#put} stored.
 *
 * @param manifest        the stream's id, to give to {@code open} and to the GC's live set
 * @param logicalBytes    the stream's length
 * @param chunks          chunks in its manifest (repeats counted)
 * @param newChunks       chunks that were not in the store and were uploaded
 * @param newLogicalBytes uncompressed bytes of those new chunks: what dedup could not spare
 * @param storedBytes     bytes written to the backend after dedup and compression, manifest included
 * @param retries         backend calls that failed for a passing reason and were tried again
 */
public record PutResult(ManifestId manifest, long logicalBytes, int chunks, int newChunks, long newLogicalBytes,
                        long storedBytes, int retries) {
}
