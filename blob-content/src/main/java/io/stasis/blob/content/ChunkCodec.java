package io.stasis.blob.content;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdException;
import io.stasis.core.blob.ChunkRef;

/**
 * The only class that calls zstd (zstd-jni). A stored chunk is one zstd frame with the content
 * size in its header; the magic number at its start leaves room for other codecs later.
 */
final class ChunkCodec {
    private final int level;

    ChunkCodec(int level) {
        this.level = level;
    }

    byte[] compress(byte[] data) {
        return Zstd.compress(data, level);
    }

    /** The most bytes a stored chunk of this size can take: anything longer is not one of ours. */
    int maxStoredSize(ChunkRef ref) {
        return (int) Math.min(Integer.MAX_VALUE - 8, Zstd.compressBound(ref.size()));
    }

    /**
     * The chunk's bytes, checked against its manifest entry: the size and the SHA-256.
     * {@link IllegalArgumentException} saying what is wrong otherwise.
     */
    byte[] decompress(byte[] stored, ChunkRef ref) {
        byte[] data;
        try {
            long declared = Zstd.getFrameContentSize(stored);
            if (declared < 0) throw new IllegalArgumentException("it is not a zstd frame that declares its size (" + declared + ")");
            if (declared != ref.size())
                throw new IllegalArgumentException("its zstd frame declares " + declared + " bytes, the manifest " + ref.size());
            data = Zstd.decompress(stored, ref.size());
        } catch (ZstdException e) {
            throw new IllegalArgumentException("it is not a valid zstd frame: " + e.getMessage());
        }
        if (data.length != ref.size())
            throw new IllegalArgumentException("it decompresses to " + data.length + " bytes, the manifest says " + ref.size());
        if (!ref.id().matches(data, 0, data.length)) throw new IllegalArgumentException("its content does not hash to its id");
        return data;
    }
}
