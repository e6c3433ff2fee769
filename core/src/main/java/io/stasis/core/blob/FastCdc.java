package io.stasis.core.blob;

import java.io.IOException;
import java.io.InputStream;
import java.util.Objects;

/**
 * Content-defined chunking: FastCDC (Xia et al., USENIX ATC 2016) with a gear hash and normalized
 * chunking. A boundary falls where the hash of the last bytes matches a mask, so it moves with the
 * content: an insertion early in a stream changes the chunks around it, and the chunks after it
 * come out the same as before. That is what makes two checkpoints of a mostly unchanged sandbox
 * share almost all their chunks.
 *
 * <p>How a cut is chosen, from the start of a chunk: the first {@code minSize} bytes are never a
 * boundary (and are not hashed); up to {@code avgSize} the strict mask ({@code log2(avg)+1} bits)
 * must match, after it the loose one ({@code log2(avg)-1} bits), which pulls sizes towards the
 * average; at {@code maxSize} the chunk is cut regardless. The mask bits are the hash's top bits,
 * which depend on the last 64 bytes. Only the last chunk of a stream may be shorter than
 * {@code minSize}.
 *
 * <p>Normalization level 1, not the paper's 2: a cut depends on where its chunk started, so after
 * an edit the two chunkings fall back into step only when they happen to cut at the same place.
 * Measured with the default proportions (min = avg/4, max = 4 avg) over 10^5 random insertions,
 * level 2 left up to 20 new chunks behind an edit (mean 1.7), level 1 up to 11 (mean 1.3):
 * checkpoints of edited files share more.
 *
 * <p><b>Never change the gear table, the masks or the defaults</b>: boundaries would move, and new
 * uploads would share nothing with what is already stored (still correct, but no dedup). A golden
 * test pins them. (The default size was changed once, by measurement, right after durable
 * checkpoints were first stored: see {@link #DEFAULT}.)
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class FastCdc {
    /**
     * 32 KiB minimum, 128 KiB average, 512 KiB maximum: chosen by measurement (docs/BENCHMARKS.md,
     * "Blob store"). The full {@code btrfs send} stream of a 1 GiB sandbox-like root, stored again
     * after 95 small edits in 1% of its bytes, adds 2.37% of what the first stored (target: at most
     * 3%); 256 KiB chunks added 3.81%, 64 KiB chunks 1.50%. A stored byte costs roughly its chunk,
     * however small the edit, so smaller chunks dedup better, but each chunk is an object: 128 KiB
     * chunks come out at 177 KiB on average in such streams, ~6,100 objects (S3 requests) per GiB
     * against ~3,100 with 256 KiB and ~12,800 with 64 KiB, whose first checkpoint also compresses
     * 10% worse (6% better than 64 KiB here, 4% worse than 256 KiB).
     * <p>Until 2026-11-29 the default was 64 KiB / 256 KiB / 1 MiB: streams stored with it stay
     * readable (a manifest names its chunks), but new uploads share no chunks with them.
     */
    public static final FastCdc DEFAULT = new FastCdc(32 << 10, 128 << 10, 512 << 10);

    /** The smallest minimum accepted: below it the hash window (64 bytes) would span chunk starts. */
    public static final int MIN_MIN_SIZE = 64;

    private static final long[] GEAR = gearTable(0x5354_4153_4953_4344L); // "STASISCD"

    private final int minSize;
    private final int avgSize;
    private final int maxSize;
    private final long maskStrict;
    private final long maskLoose;

    /**
     * @param minSize at least {@value #MIN_MIN_SIZE}, below {@code avgSize}
     * @param avgSize a power of two, the target average; from 2^8 to 2^24
     * @param maxSize above {@code avgSize}, at most {@link ChunkRef#MAX_SIZE}
     */
    public FastCdc(int minSize, int avgSize, int maxSize) {
        if (Integer.bitCount(avgSize) != 1 || avgSize < (1 << 8) || avgSize > (1 << 24))
            throw new IllegalArgumentException("avgSize must be a power of two from 256 to 16 MiB, was " + avgSize);
        if (minSize < MIN_MIN_SIZE || minSize >= avgSize)
            throw new IllegalArgumentException("minSize must be from " + MIN_MIN_SIZE + " to below avgSize " + avgSize + ", was " + minSize);
        if (maxSize <= avgSize || maxSize > ChunkRef.MAX_SIZE)
            throw new IllegalArgumentException("maxSize must be above avgSize " + avgSize + " and at most " + ChunkRef.MAX_SIZE + ", was " + maxSize);
        this.minSize = minSize;
        this.avgSize = avgSize;
        this.maxSize = maxSize;
        int bits = Integer.numberOfTrailingZeros(avgSize);
        this.maskStrict = topBits(bits + 1);
        this.maskLoose = topBits(bits - 1);
    }

    public int minSize() {
        return minSize;
    }

    public int avgSize() {
        return avgSize;
    }

    public int maxSize() {
        return maxSize;
    }

    /**
     * The length of the chunk that starts at {@code offset}, among the {@code length} bytes there.
     * <p>Prerequisites: {@code length > 0}; either {@code length >= maxSize()} or the stream ends
     * after these bytes (otherwise the cut would depend on how much was read).
     */
    public int cut(byte[] data, int offset, int length) {
        Objects.checkFromIndexSize(offset, length, data.length);
        if (length <= 0) throw new IllegalArgumentException("no bytes to cut");
        if (length <= minSize) return length;
        int end = Math.min(length, maxSize);
        int normal = Math.min(avgSize, end);
        long hash = 0;
        int i = minSize;
        for (; i < normal; i++) {
            hash = (hash << 1) + GEAR[data[offset + i] & 0xff];
            if ((hash & maskStrict) == 0) return i + 1;
        }
        for (; i < end; i++) {
            hash = (hash << 1) + GEAR[data[offset + i] & 0xff];
            if ((hash & maskLoose) == 0) return i + 1;
        }
        return end;
    }

    /** Receives each chunk in turn; the buffer is reused once {@code accept} returns, so copy what you keep. */
    @FunctionalInterface
    public interface ChunkConsumer {
        void accept(byte[] buffer, int offset, int length) throws IOException;
    }

    /**
     * Reads {@code in} to its end and hands each chunk to {@code consumer}, in order. The chunks
     * depend only on the bytes, not on how the stream delivers them. Does not close {@code in}.
     *
     * @return the number of bytes read
     */
    public long split(InputStream in, ChunkConsumer consumer) throws IOException {
        byte[] buf = new byte[2 * maxSize];
        int start = 0;
        int end = 0;
        boolean eof = false;
        long total = 0;
        while (true) {
            if (!eof && end - start < maxSize) {
                if (start > 0 && buf.length - start < maxSize) {
                    System.arraycopy(buf, start, buf, 0, end - start);
                    end -= start;
                    start = 0;
                }
                while (end - start < maxSize) {
                    int n = in.read(buf, end, buf.length - end);
                    if (n < 0) {
                        eof = true;
                        break;
                    }
                    end += n;
                    total += n;
                }
            }
            if (end == start) return total;
            int n = cut(buf, start, end - start);
            consumer.accept(buf, start, n);
            start += n;
        }
    }

    @Override
    public String toString() {
        return "FastCdc[min=" + minSize + ", avg=" + avgSize + ", max=" + maxSize + "]";
    }

    private static long topBits(int n) {
        return -1L << (64 - n);
    }

    /** 256 pseudo-random 64-bit values from SplitMix64: fixed forever by the seed. */
    private static long[] gearTable(long seed) {
        long[] table = new long[256];
        long state = seed;
        for (int i = 0; i < table.length; i++) {
            state += 0x9E37_79B9_7F4A_7C15L;
            long z = state;
            z = (z ^ (z >>> 30)) * 0xBF58_476D_1CE4_E5B9L;
            z = (z ^ (z >>> 27)) * 0x94D0_49BB_1331_11EBL;
            table[i] = z ^ (z >>> 31);
        }
        return table;
    }
}
