package io.stasis.core.blob;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/** Test data and chunk lists for the chunker's tests. */
final class Chunks {
    private Chunks() {
    }

    /** Random bytes; with {@code lowEntropy} from a four-letter alphabet in long runs, like sparse images. */
    static byte[] data(long seed, int size, boolean lowEntropy) {
        var random = new SplittableRandom(seed);
        byte[] data = new byte[size];
        if (!lowEntropy) {
            random.nextBytes(data);
            return data;
        }
        int i = 0;
        while (i < size) {
            int run = Math.min(size - i, 1 + random.nextInt(5000));
            byte b = (byte) (random.nextInt(4) * 60);
            Arrays.fill(data, i, i + run, b);
            i += run;
        }
        return data;
    }

    static List<byte[]> split(FastCdc cdc, InputStream in) {
        var chunks = new ArrayList<byte[]>();
        try {
            cdc.split(in, (buf, off, len) -> chunks.add(Arrays.copyOfRange(buf, off, off + len)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return chunks;
    }

    static List<byte[]> split(FastCdc cdc, byte[] data) {
        return split(cdc, new ByteArrayInputStream(data));
    }

    static List<Integer> sizes(List<byte[]> chunks) {
        return chunks.stream().map(c -> c.length).toList();
    }

    static List<ChunkId> ids(List<byte[]> chunks) {
        return chunks.stream().map(ChunkId::of).toList();
    }

    /** A stream that hands out at most a few bytes per read, sizes drawn from {@code seed}. */
    static InputStream trickling(byte[] data, long seed) {
        var random = new SplittableRandom(seed);
        return new ByteArrayInputStream(data) {
            @Override
            public synchronized int read(byte[] b, int off, int len) {
                return super.read(b, off, Math.min(len, 1 + random.nextInt(3000)));
            }
        };
    }
}
