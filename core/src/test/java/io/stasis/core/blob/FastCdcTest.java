package io.stasis.core.blob;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Boundaries are part of the stored format: these pin them, and the checks on the sizes. */
class FastCdcTest {

    @Test
    void theDefaultBoundariesNeverMove() {
        byte[] data = Chunks.data(42, 8 << 20, false);
        assertThat(Chunks.sizes(Chunks.split(FastCdc.DEFAULT, data))).isEqualTo(GOLDEN_DEFAULT);
    }

    @Test
    void smallChunkersCutTheSameWayForever() {
        byte[] data = Chunks.data(7, 20_000, false);
        assertThat(Chunks.sizes(Chunks.split(new FastCdc(64, 256, 1024), data))).isEqualTo(GOLDEN_SMALL);
    }

    @Test
    void zerosAreCutIntoIdenticalChunks() {
        var chunks = Chunks.ids(Chunks.split(FastCdc.DEFAULT, new byte[5 << 20]));
        assertThat(chunks).hasSizeGreaterThan(1);
        assertThat(chunks.subList(0, chunks.size() - 1)).containsOnly(chunks.getFirst());
    }

    @Test
    void anEmptyStreamHasNoChunks() {
        assertThat(Chunks.split(FastCdc.DEFAULT, new byte[0])).isEmpty();
    }

    @Test
    void sizesAreCheckedAndTheBadOneNamed() {
        assertThatThrownBy(() -> new FastCdc(64, 1000, 4096)).hasMessageContaining("power of two").hasMessageContaining("1000");
        assertThatThrownBy(() -> new FastCdc(32, 1024, 4096)).hasMessageContaining("minSize").hasMessageContaining("32");
        assertThatThrownBy(() -> new FastCdc(1024, 1024, 4096)).hasMessageContaining("minSize");
        assertThatThrownBy(() -> new FastCdc(256, 1024, 1024)).hasMessageContaining("maxSize").hasMessageContaining("1024");
        assertThatThrownBy(() -> new FastCdc(256, 1024, ChunkRef.MAX_SIZE + 1)).hasMessageContaining("maxSize");
    }

    /** Chunk sizes of 8 MiB from SplittableRandom(42).nextBytes with the defaults (32 KiB / 128 KiB / 512 KiB). */
    private static final List<Integer> GOLDEN_DEFAULT = List.of(
            98810, 134658, 35757, 150838, 241021, 39336, 75037, 224474, 266450, 162613, 352691, 117350, 198717, 131837, 182786,
            141851, 180968, 70150, 299878, 168674, 261562, 82886, 223635, 187506, 316262, 122557, 198587, 74124, 231247, 276471,
            192832, 188816, 105412, 187139, 167401, 188999, 38820, 136638, 161545, 152163, 172199, 391152, 69674, 369248, 138502,
            126636, 122945, 174444, 55310);
    /** Chunk sizes of 20000 bytes from SplittableRandom(7).nextBytes with 64/256/1024. */
    private static final List<Integer> GOLDEN_SMALL = List.of(
            239, 73, 377, 421, 361, 295, 304, 487, 359, 487, 298, 581, 549, 426, 280, 74, 206, 321, 370, 472, 471, 369,
            69, 78, 110, 311, 273, 301, 425, 337, 87, 310, 340, 87, 455, 368, 282, 144, 250, 442, 276, 174, 694, 227, 351,
            319, 315, 616, 301, 463, 355, 101, 354, 177, 351, 232, 285, 316, 237, 976, 391);
}
