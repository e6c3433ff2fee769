package io.stasis.blob.content;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.blob.local.LocalBlobStore;
import io.stasis.blob.s3.S3BlobStore;
import io.stasis.blob.s3.S3ProxyServer;
import io.stasis.core.blob.FastCdc;
import io.stasis.core.blob.ManifestId;
import io.stasis.core.spi.BlobStore;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How long a collection takes over some thousands of chunks, half of them garbage, on each backend.
 * Prints the figures (measured, not asserted: the machine is shared).
 */
class GcScaleTest {
    private static final Logger log = LoggerFactory.getLogger(GcScaleTest.class);
    /** Small chunks, so that thousands of them take a few MB. */
    private static final ContentStoreConfig TINY = ContentStoreConfig.DEFAULT.withChunker(new FastCdc(256, 1024, 4096))
            .withGcGrace(Duration.ZERO);
    private static final int STREAMS = 8;
    private static final int STREAM_BYTES = 256 * 1024;

    @TempDir
    Path dir;

    @Test
    void onALocalDirectory() {
        try (var blobs = new LocalBlobStore(dir)) {
            measure("local", blobs);
        }
    }

    @Test
    void onS3() {
        try (var server = new S3ProxyServer(); var blobs = new S3BlobStore(server.newBucket())) {
            measure("s3 (s3proxy, loopback)", blobs);
        }
    }

    private static void measure(String backend, BlobStore blobs) {
        var store = new ContentStore(blobs, TINY, Clock.systemUTC(), "scale");
        Set<ManifestId> live = new HashSet<>();
        for (int i = 0; i < STREAMS; i++) {
            var put = store.put(TestData.random(1000 + i, STREAM_BYTES)).manifest();
            if (i % 2 == 0) live.add(put);
        }
        long chunks = store.usage().chunks();
        var report = store.gc(live);
        assertThat(report.chunksDeleted() + report.chunksKept()).isEqualTo(chunks);
        var again = store.gc(live);
        String figures = String.format("gc on %s: %d chunks (%d deleted) in %d ms; again with nothing to delete: %d ms", backend, chunks,
                report.chunksDeleted(), report.took().toMillis(), again.took().toMillis());
        System.out.println(figures);
        log.atInfo().log(figures);
    }
}
