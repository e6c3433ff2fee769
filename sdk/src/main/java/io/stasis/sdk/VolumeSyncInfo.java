package io.stasis.sdk;

import java.time.Instant;

/**
 * A volume's content made durable in the blob store.
 *
 * @param parentId    the sync this one's stream is incremental to, or null for a full one
 * @param streams     how many send streams a restore receives
 * @param streamBytes the size of this sync's own stream
 */
public record VolumeSyncInfo(String id, String volumeId, String parentId, int streams, long streamBytes, Instant createdAt) {
}
