package io.stasis.core.blob;

import java.util.Objects;

/** One entry of a manifest: which chunk, and how many bytes it gives back uncompressed. */
public record ChunkRef(ChunkId id, int size) {
    /**
     * No chunk is larger: a reader allocates a chunk's size before decompressing it, so a corrupt
     * or hostile manifest must not be able to ask for gigabytes.
     */
    public static final int MAX_SIZE = 64 << 20;

    public ChunkRef {
        Objects.requireNonNull(id, "id");
        if (size < 1 || size > MAX_SIZE)
            throw new IllegalArgumentException("chunk " + id + " has size " + size + ", outside 1.." + MAX_SIZE);
    }
}
