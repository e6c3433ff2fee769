package io.stasis.blob.content;

import io.stasis.core.blob.ChunkId;
import io.stasis.core.blob.ManifestId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import java.util.LinkedHashMap;
import java.util.Map;

/** The content store's errors, named once so their messages and details stay alike. */
final class ContentErrors {
    private ContentErrors() {
    }

    static StasisException manifestNotFound(ManifestId id) {
        return new StasisException(ErrorCode.NOT_FOUND, "no stored stream with manifest " + id, Map.of("manifest", id.hex()));
    }

    /** Stored bytes that are not what their id says: never returned, always loud. */
    static StasisException corruptManifest(ManifestId id, String why) {
        return new StasisException(ErrorCode.INTERNAL, "stored manifest " + id + " is corrupt: " + why,
                Map.of("manifest", id.hex(), "problem", why));
    }

    static StasisException corruptChunk(ManifestId manifest, int index, ChunkId chunk, String why) {
        var details = new LinkedHashMap<String, Object>();
        details.put("manifest", manifest.hex());
        details.put("chunk", chunk.hex());
        details.put("index", index);
        details.put("problem", why);
        return new StasisException(ErrorCode.INTERNAL, "chunk " + index + " (" + chunk + ") of stream " + manifest + " is corrupt: " + why,
                details);
    }

    static StasisException missingChunk(ManifestId manifest, int index, ChunkId chunk) {
        return corruptChunk(manifest, index, chunk, "it is missing from the store");
    }

    /** The backend kept failing for a passing reason until the retries ran out. */
    static StasisException backendFailed(String step, String key, int attempts, RuntimeException last) {
        var details = new LinkedHashMap<String, Object>();
        details.put("step", step);
        details.put("key", key);
        details.put("attempts", attempts);
        return new StasisException(ErrorCode.RUNTIME_FAILED,
                step + " " + key + " failed " + attempts + " times, the last: " + last.getMessage(), details, last);
    }

    static StasisException interrupted(String step, String key) {
        return new StasisException(ErrorCode.RUNTIME_FAILED, step + " " + key + " was interrupted", Map.of("step", step, "key", key));
    }
}
