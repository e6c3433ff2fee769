package io.stasis.core.blob;

import java.util.List;

/**
 * A stored stream: its chunks in order, with their sizes. Concatenating the chunks gives back the
 * stream. The same chunk may appear more than once (runs of zeros do).
 */
public record Manifest(List<ChunkRef> chunks) {
    public Manifest {
        chunks = List.copyOf(chunks);
    }

    /** The stream's length in bytes. */
    public long size() {
        long total = 0;
        for (ChunkRef c : chunks) total += c.size();
        return total;
    }
}
