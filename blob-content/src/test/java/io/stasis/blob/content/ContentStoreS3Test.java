package io.stasis.blob.content;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.blob.s3.S3BlobStore;
import io.stasis.blob.s3.S3ProxyServer;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.testkit.MutableClock;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The content store end to end on S3 (s3proxy in this JVM, on loopback): store, dedup, verified
 * read, corruption caught, GC. Prints the throughput it saw (measured, not asserted).
 */
class ContentStoreS3Test {
    private static final Logger log = LoggerFactory.getLogger(ContentStoreS3Test.class);
    private static S3ProxyServer server;

    @BeforeAll
    static void startServer() {
        server = new S3ProxyServer();
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    @Test
    void streamsGoThroughS3WithDedupVerificationAndGc() {
        var clock = new MutableClock();
        try (var blobs = new S3BlobStore(server.newBucket())) {
            var store = new ContentStore(blobs, ContentStoreConfig.DEFAULT, clock);
            int size = 32 << 20;
            byte[] first = TestData.random(41, size);
            byte[] second = first.clone();
            System.arraycopy(TestData.random(42, 100_000), 0, second, size / 2, 100_000);

            var warmUp = store.put(TestData.random(1, 4 << 20)).manifest(); // warms up the JIT, not measured
            TestData.readAll(store.open(warmUp));
            long t0 = System.nanoTime();
            PutResult a = store.put(first);
            long t1 = System.nanoTime();
            PutResult b = store.put(second);
            long t2 = System.nanoTime();
            byte[] back = TestData.readAll(store.open(b.manifest()));
            long t3 = System.nanoTime();
            assertThat(back).isEqualTo(second);
            assertThat(b.storedBytes()).isLessThan(size / 10);
            String figures = String.format("s3 (s3proxy, loopback): %d MiB in %d chunks: put new %.0f MB/s, put deduped %.0f MB/s "
                            + "(%d of %d chunks new, %d bytes stored), verified read %.0f MB/s",
                    size >> 20, a.chunks(), TestData.mbPerSecond(size, t1 - t0), TestData.mbPerSecond(size, t2 - t1),
                    b.newChunks(), b.chunks(), b.storedBytes(), TestData.mbPerSecond(size, t3 - t2));
            System.out.println(figures);
            log.atInfo().log(figures);

            // A chunk corrupted in the bucket is caught on read.
            var victim = store.chunks(a.manifest()).get(5).id();
            blobs.put(Layout.chunkKey(victim), new byte[] {1, 2, 3});
            assertThatThrownBy(() -> TestData.readAll(store.open(a.manifest()))).isInstanceOfSatisfying(StasisException.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL);
                assertThat(e.getMessage()).contains(victim.hex());
            });

            // Only b stays live: a's own chunks (the corrupt one among them) go, b still reads.
            clock.advance(Duration.ofHours(2));
            GcReport report = store.gc(Set.of(b.manifest(), warmUp));
            assertThat(report.manifestsDeleted()).isEqualTo(1);
            assertThat(report.chunksDeleted()).isEqualTo(a.chunks() - (b.chunks() - b.newChunks()));
            assertThat(store.manifests()).containsExactlyInAnyOrder(b.manifest(), warmUp);
        }
    }
}
