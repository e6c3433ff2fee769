package io.stasis.blob.content;

import io.stasis.core.blob.ChunkId;
import io.stasis.core.blob.ManifestId;
import java.util.Optional;

/**
 * Where things are in the backend:
 * <pre>
 *   chunks/&lt;first two hex digits&gt;/&lt;sha-256 hex&gt;   a zstd frame of the chunk's bytes
 *   manifests/&lt;sha-256 hex&gt;                        an encoded manifest (ManifestCodec)
 * </pre>
 * The two-digit fan-out keeps directories of the local backend small; S3 ignores it. Keys that do
 * not parse are not ours: the GC never deletes them.
 */
final class Layout {
    static final String CHUNKS = "chunks/";
    static final String MANIFESTS = "manifests/";

    private Layout() {
    }

    static String chunkKey(ChunkId id) {
        return CHUNKS + id.hex().substring(0, 2) + "/" + id.hex();
    }

    static String manifestKey(ManifestId id) {
        return MANIFESTS + id.hex();
    }

    static Optional<ChunkId> chunkOf(String key) {
        if (!key.startsWith(CHUNKS) || key.length() != CHUNKS.length() + 3 + 64) return Optional.empty();
        String hex = key.substring(CHUNKS.length() + 3);
        try {
            var id = new ChunkId(hex);
            return key.equals(chunkKey(id)) ? Optional.of(id) : Optional.empty();
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    static Optional<ManifestId> manifestOf(String key) {
        if (!key.startsWith(MANIFESTS)) return Optional.empty();
        try {
            return Optional.of(new ManifestId(key.substring(MANIFESTS.length())));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }
}
