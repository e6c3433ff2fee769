package io.stasis.core.blob;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.util.HashSet;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * The chunker's promises, on random and on low-entropy data, with small sizes so that a try
 * makes dozens of chunks: concatenation gives the input back, sizes stay in bounds, boundaries
 * depend on the bytes alone, and an insertion disturbs only the chunks near it.
 */
class FastCdcPropertyTest {
    /**
     * At most this many chunks of an edited stream are new. Measured with these chunkers: at most
     * 16 in 5 x 10^5 random insertions (mean 1.4), each further chunk about 3 times rarer.
     */
    private static final int NEW_CHUNKS_PER_EDIT = 24;

    @Provide
    Arbitrary<FastCdc> chunkers() {
        // The default's proportions (min = avg/4, max = 4 avg) and their neighbours, at small sizes.
        return Combinators.combine(Arbitraries.integers().between(8, 12), Arbitraries.integers().between(4, 8),
                        Arbitraries.integers().between(4, 8))
                .as((avgBits, minDivisor, maxFactor) -> {
                    int avg = 1 << avgBits;
                    return new FastCdc(Math.max(FastCdc.MIN_MIN_SIZE, avg / minDivisor), avg, avg * maxFactor);
                });
    }

    @Property
    void concatenatingTheChunksGivesTheInputBack(@ForAll("chunkers") FastCdc cdc, @ForAll long seed,
                                                 @ForAll @IntRange(max = 40_000) int size, @ForAll boolean lowEntropy) throws Exception {
        byte[] data = Chunks.data(seed, size, lowEntropy);
        var out = new ByteArrayOutputStream();
        for (byte[] chunk : Chunks.split(cdc, data)) out.write(chunk);
        assertThat(out.toByteArray()).isEqualTo(data);
    }

    @Property
    void everyChunkButTheLastIsBetweenMinAndMax(@ForAll("chunkers") FastCdc cdc, @ForAll long seed,
                                                @ForAll @IntRange(max = 40_000) int size, @ForAll boolean lowEntropy) {
        List<Integer> sizes = Chunks.sizes(Chunks.split(cdc, Chunks.data(seed, size, lowEntropy)));
        for (int i = 0; i < sizes.size(); i++) {
            assertThat(sizes.get(i)).isPositive().isLessThanOrEqualTo(cdc.maxSize());
            if (i < sizes.size() - 1) assertThat(sizes.get(i)).isGreaterThanOrEqualTo(cdc.minSize());
        }
        assertThat(sizes.isEmpty()).isEqualTo(size == 0);
    }

    @Property
    void boundariesDependOnTheBytesNotOnHowTheyAreRead(@ForAll("chunkers") FastCdc cdc, @ForAll long seed,
                                                       @ForAll @IntRange(max = 40_000) int size, @ForAll boolean lowEntropy) {
        byte[] data = Chunks.data(seed, size, lowEntropy);
        var whole = Chunks.sizes(Chunks.split(cdc, data));
        assertThat(Chunks.sizes(Chunks.split(cdc, data))).isEqualTo(whole);
        assertThat(Chunks.sizes(Chunks.split(cdc, Chunks.trickling(data, seed)))).isEqualTo(whole);
    }

    @Property
    void anInsertionChangesOnlyTheChunksNearIt(@ForAll("chunkers") FastCdc cdc, @ForAll long seed,
                                               @ForAll @IntRange(min = 1, max = 60_000) int size,
                                               @ForAll @IntRange(max = 60_000) int where, @ForAll byte[] inserted) {
        byte[] data = Chunks.data(seed, size, false);
        int at = where % (size + 1);
        byte[] edited = new byte[size + inserted.length];
        System.arraycopy(data, 0, edited, 0, at);
        System.arraycopy(inserted, 0, edited, at, inserted.length);
        System.arraycopy(data, at, edited, at + inserted.length, size - at);

        var before = Chunks.split(cdc, data);
        var after = Chunks.split(cdc, edited);
        // Chunks that end before the insertion cannot see it (but the last one was cut by the end of the stream).
        int unchanged = 0;
        for (int end = 0; unchanged < before.size() - 1 && end + before.get(unchanged).length <= at; unchanged++)
            end += before.get(unchanged).length;
        assertThat(Chunks.ids(after).subList(0, unchanged)).isEqualTo(Chunks.ids(before).subList(0, unchanged));
        // And the chunking falls back into step soon after it.
        var known = new HashSet<>(Chunks.ids(before));
        long fresh = Chunks.ids(after).stream().filter(id -> !known.contains(id)).count();
        assertThat(fresh).as("new chunks after inserting %d bytes at %d of %d", inserted.length, at, size)
                .isLessThanOrEqualTo(NEW_CHUNKS_PER_EDIT);
    }
}
