package io.stasis.blob.content;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.blob.local.LocalBlobStore;
import java.nio.file.Path;
import java.time.Clock;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Two streams that share 99% of their content, with the default chunker: the second stores only
 * what changed and the chunks around it. Prints the figures and the throughput it saw (measured,
 * not asserted).
 */
class DedupTest {
    private static final Logger log = LoggerFactory.getLogger(DedupTest.class);
    private static final int SIZE = 64 << 20;

    @TempDir
    Path dir;

    @Test
    void aStreamSharing99PercentWithAStoredOneStoresOnlyASmallFraction() {
        byte[] first = TestData.random(11, SIZE);
        byte[] second = edited(first, 12);
        try (var blobs = new LocalBlobStore(dir)) {
            var store = new ContentStore(blobs, ContentStoreConfig.DEFAULT, Clock.systemUTC());

            TestData.readAll(store.open(store.put(TestData.random(1, 4 << 20)).manifest())); // warm up the JIT, not measured
            long t0 = System.nanoTime();
            PutResult a = store.put(first);
            long t1 = System.nanoTime();
            PutResult b = store.put(second);
            long t2 = System.nanoTime();
            byte[] back = TestData.readAll(store.open(b.manifest()));
            long t3 = System.nanoTime();

            assertThat(back).isEqualTo(second);
            assertThat(a.newChunks()).isEqualTo(a.chunks());
            double storedFraction = (double) b.storedBytes() / b.logicalBytes();
            double newFraction = (double) b.newLogicalBytes() / b.logicalBytes();
            String figures = String.format(
                    "dedup: first %d MiB in %d chunks stored %d bytes; second (99%% shared) %d chunks, %d new, %d new bytes (%.2f%%), "
                            + "stored %d bytes (%.2f%%); local disk: put new %.0f MB/s, put deduped %.0f MB/s, verified read %.0f MB/s",
                    SIZE >> 20, a.chunks(), a.storedBytes(), b.chunks(), b.newChunks(), b.newLogicalBytes(), 100 * newFraction,
                    b.storedBytes(), 100 * storedFraction, TestData.mbPerSecond(SIZE, t1 - t0),
                    TestData.mbPerSecond(second.length, t2 - t1), TestData.mbPerSecond(second.length, t3 - t2));
            System.out.println(figures);
            log.atInfo().log(figures);
            assertThat(storedFraction).as(figures).isLessThan(0.08);
            assertThat(b.chunks() - b.newChunks()).as(figures).isGreaterThan(b.chunks() * 9 / 10);
        }
    }

    /** {@code data} with about 1% changed: three 64 KiB overwrites, one 200 KiB overwrite, a 4 KiB insertion, a 4 KiB deletion. */
    private static byte[] edited(byte[] data, long seed) {
        var random = new SplittableRandom(seed);
        byte[] copy = data.clone();
        for (int len : new int[] {64 << 10, 64 << 10, 64 << 10, 200 << 10}) {
            int at = random.nextInt(copy.length - len);
            byte[] noise = TestData.random(random.nextLong(), len);
            System.arraycopy(noise, 0, copy, at, len);
        }
        int insertAt = copy.length / 3;
        int deleteAt = 2 * copy.length / 3;
        int change = 4 << 10;
        byte[] out = new byte[copy.length];
        System.arraycopy(copy, 0, out, 0, insertAt);
        System.arraycopy(TestData.random(random.nextLong(), change), 0, out, insertAt, change);
        System.arraycopy(copy, insertAt, out, insertAt + change, deleteAt - insertAt);
        System.arraycopy(copy, deleteAt + change, out, deleteAt + change, copy.length - deleteAt - change);
        return out;
    }
}
