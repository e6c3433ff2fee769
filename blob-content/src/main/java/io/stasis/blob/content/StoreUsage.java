package io.stasis.blob.content;

/**
 * What a content store holds, counted by listing it.
 *
 * @param manifests   stored streams
 * @param chunks      distinct chunks
 * @param storedBytes bytes in the backend (compressed chunks and manifests)
 */
public record StoreUsage(long manifests, long chunks, long storedBytes) {
}
