package io.stasis.bench;

import io.stasis.core.blob.FastCdc;
import java.util.List;

/**
 * A FastCDC chunk size the blob scenarios compare, in the default's proportions (minimum a quarter
 * of the average, maximum four times it): what the choice of {@link FastCdc#DEFAULT} rests on.
 *
 * @param label   {@code 64k}, {@code 128k}, {@code 256k}: the average, in figure names
 * @param chunker the chunker
 */
record ChunkSize(String label, FastCdc chunker) {
    /** The averages compared, smallest first; the default is one of them. */
    static final List<ChunkSize> COMPARED = List.of(averageKib(64), averageKib(128), averageKib(256));

    static ChunkSize averageKib(int kib) {
        int avg = kib << 10;
        return new ChunkSize(kib + "k", new FastCdc(avg / 4, avg, avg * 4));
    }

    /** The compared size that is the store's default; fails if the default is not among them. */
    static ChunkSize ofDefault() {
        return COMPARED.stream().filter(ChunkSize::isDefault).findFirst().orElseThrow(() -> new IllegalStateException(
                "FastCdc.DEFAULT (" + describe(FastCdc.DEFAULT) + ") is not among the compared chunk sizes"));
    }

    boolean isDefault() {
        var d = FastCdc.DEFAULT;
        return chunker.minSize() == d.minSize() && chunker.avgSize() == d.avgSize() && chunker.maxSize() == d.maxSize();
    }

    /** The suffix of a comparison figure: {@code .chunks-64k}. */
    String suffix() {
        return ".chunks-" + label;
    }

    /** {@code 16 KiB / 64 KiB / 256 KiB}. */
    String describe() {
        return describe(chunker);
    }

    private static String describe(FastCdc c) {
        return kib(c.minSize()) + " / " + kib(c.avgSize()) + " / " + kib(c.maxSize());
    }

    private static String kib(int bytes) {
        return bytes >= (1 << 20) ? (bytes >> 20) + " MiB" : (bytes >> 10) + " KiB";
    }
}
