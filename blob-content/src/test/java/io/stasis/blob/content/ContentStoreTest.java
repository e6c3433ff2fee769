package io.stasis.blob.content;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.blob.local.LocalBlobStore;
import io.stasis.core.blob.FastCdc;
import io.stasis.core.blob.ManifestId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Put and read back on a real local store: round trips, dedup inside and across streams, compression. */
class ContentStoreTest {
    @TempDir
    Path dir;
    private LocalBlobStore blobs;
    private ContentStore store;

    @BeforeEach
    void open() {
        blobs = new LocalBlobStore(dir);
        store = new ContentStore(blobs, ContentStoreConfig.DEFAULT.withChunker(new FastCdc(4096, 16384, 65536)), Clock.systemUTC());
    }

    @AfterEach
    void close() {
        blobs.close();
    }

    @Test
    void aStreamReadsBackAsItWasStored() {
        byte[] data = TestData.random(1, 1_234_567);
        PutResult put = store.put(data);
        assertThat(put.logicalBytes()).isEqualTo(data.length);
        assertThat(put.chunks()).isGreaterThan(10).isEqualTo(put.newChunks());
        assertThat(put.newLogicalBytes()).isEqualTo(data.length);
        assertThat(TestData.readAll(store.open(put.manifest()))).isEqualTo(data);
        assertThat(store.exists(put.manifest())).isTrue();
        assertThat(store.manifests()).containsExactly(put.manifest());
        assertThat(store.manifest(put.manifest()).size()).isEqualTo(data.length);
    }

    @Test
    void anEmptyStreamIsAStreamToo() {
        PutResult put = store.put(new byte[0]);
        assertThat(put.chunks()).isZero();
        assertThat(TestData.readAll(store.open(put.manifest()))).isEmpty();
    }

    @Test
    void theSameStreamTwiceIsStoredOnceUnderOneId() {
        byte[] data = TestData.random(2, 300_000);
        PutResult first = store.put(data);
        PutResult second = store.put(data);
        assertThat(second.manifest()).isEqualTo(first.manifest());
        assertThat(second.newChunks()).isZero();
        assertThat(second.newLogicalBytes()).isZero();
        assertThat(second.storedBytes()).isEqualTo(18 + 36L * second.chunks()); // the manifest alone
        assertThat(store.usage().chunks()).isEqualTo(first.chunks());
    }

    @Test
    void repeatedChunksInsideAStreamAreUploadedOnce() {
        PutResult zeros = store.put(new byte[4 << 20]);
        assertThat(zeros.chunks()).isEqualTo(64); // 4 MiB of max-size chunks
        assertThat(zeros.newChunks()).isEqualTo(1);
        assertThat(zeros.storedBytes()).isLessThan(4096);
        assertThat(TestData.readAll(store.open(zeros.manifest()))).hasSize(4 << 20).containsOnly(0);
    }

    @Test
    void compressibleStreamsAreStoredSmaller() {
        byte[] text = "the quick brown fox jumps over the lazy dog. ".repeat(50_000).getBytes(StandardCharsets.US_ASCII);
        PutResult put = store.put(text);
        assertThat(put.storedBytes()).isLessThan(text.length / 20);
        assertThat(TestData.readAll(store.open(put.manifest()))).isEqualTo(text);
    }

    @Test
    void streamsAreReadableInAnyReadSizeAndSkippable() throws Exception {
        byte[] data = TestData.random(3, 500_000);
        ManifestId id = store.put(data).manifest();
        try (var in = store.open(id)) {
            assertThat(in.read()).isEqualTo(data[0] & 0xff);
            assertThat(in.skip(100_000)).isEqualTo(100_000);
            byte[] rest = in.readAllBytes();
            assertThat(rest).hasSize(data.length - 100_001);
            assertThat(rest[0]).isEqualTo(data[100_001]);
            assertThat(in.read()).isEqualTo(-1);
        }
    }

    @Test
    void aStreamThatWasNeverStoredIsNotFound() {
        var unknown = ManifestId.of(new byte[] {1});
        assertThat(store.exists(unknown)).isFalse();
        assertThatThrownBy(() -> store.open(unknown)).isInstanceOfSatisfying(StasisException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.NOT_FOUND);
            assertThat(e.details()).containsEntry("manifest", unknown.hex());
        });
    }

    @Test
    void usageCountsWhatIsStored() {
        var a = store.put(TestData.random(4, 100_000));
        var b = store.put(TestData.random(5, 100_000));
        var usage = store.usage();
        assertThat(usage.manifests()).isEqualTo(2);
        assertThat(usage.chunks()).isEqualTo(a.newChunks() + b.newChunks());
        assertThat(usage.storedBytes()).isEqualTo(a.storedBytes() + b.storedBytes());
    }

    @Test
    void badConfigurationIsRefusedByName() {
        assertThatThrownBy(() -> ContentStoreConfig.DEFAULT.withCompressionLevel(30)).hasMessageContaining("30");
        assertThatThrownBy(() -> ContentStoreConfig.DEFAULT.withUploadConcurrency(0)).hasMessageContaining("uploadConcurrency");
        assertThatThrownBy(() -> ContentStoreConfig.DEFAULT.withGcGrace(Duration.ofSeconds(-1))).hasMessageContaining("gcGrace");
        assertThatThrownBy(() -> new RetryPolicy(0, Duration.ZERO, Duration.ZERO)).hasMessageContaining("maxAttempts");
        assertThatThrownBy(() -> new RetryPolicy(3, Duration.ofSeconds(2), Duration.ofSeconds(1))).hasMessageContaining("maxBackoff");
    }

    @Test
    void backoffDoublesUpToItsLimit() {
        var policy = new RetryPolicy(10, Duration.ofMillis(100), Duration.ofMillis(700));
        assertThat(policy.backoff(1)).isEqualTo(Duration.ofMillis(100));
        assertThat(policy.backoff(3)).isEqualTo(Duration.ofMillis(400));
        assertThat(policy.backoff(9)).isEqualTo(Duration.ofMillis(700));
    }
}
