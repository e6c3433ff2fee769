package io.stasis.blob.content;

import static io.stasis.blob.content.FaultyBlobStore.Op.GET;
import static io.stasis.blob.content.FaultyBlobStore.Op.HEAD;
import static io.stasis.blob.content.FaultyBlobStore.Op.PUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.blob.content.FaultyBlobStore.SimulatedCrash;
import io.stasis.blob.local.LocalBlobStore;
import io.stasis.core.blob.FastCdc;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.testkit.MutableClock;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Passing backend failures are retried; lasting ones fail the put with nothing visible; a process
 * killed between its chunks and its manifest leaves no stream behind, only chunks the GC removes.
 */
class FaultToleranceTest {
    private static final ContentStoreConfig CONFIG = ContentStoreConfig.DEFAULT
            .withChunker(new FastCdc(4096, 16384, 65536))
            .withRetry(new RetryPolicy(4, Duration.ofMillis(1), Duration.ofMillis(4)));

    @TempDir
    Path dir;
    private LocalBlobStore real;
    private FaultyBlobStore faulty;
    private final MutableClock clock = new MutableClock();
    private final byte[] data = TestData.random(31, 300_000);

    @BeforeEach
    void open() {
        real = new LocalBlobStore(dir);
        faulty = new FaultyBlobStore(real);
    }

    @AfterEach
    void close() {
        real.close();
    }

    @Test
    void passingFailuresOfChunkAndManifestWritesAreRetried() {
        faulty.with(FaultyBlobStore.failFirst(PUT, "chunks/", 3)).with(FaultyBlobStore.failFirst(HEAD, "chunks/", 2))
                .with(FaultyBlobStore.failFirst(PUT, "manifests/", 2));
        var store = new ContentStore(faulty, CONFIG, clock);
        PutResult put = store.put(data);
        assertThat(put.retries()).isEqualTo(7);
        assertThat(TestData.readAll(store.open(put.manifest()))).isEqualTo(data);
    }

    @Test
    void passingFailuresOfReadsAreRetried() {
        var store = new ContentStore(faulty, CONFIG, clock);
        var id = store.put(data).manifest();
        faulty.with(FaultyBlobStore.failFirst(GET, "chunks/", 3)).with(FaultyBlobStore.failFirst(GET, "manifests/", 1));
        assertThat(TestData.readAll(store.open(id))).isEqualTo(data);
    }

    @Test
    void aLastingFailureFailsThePutByNameAndLeavesNoStream() {
        faulty.with(FaultyBlobStore.failAlways(PUT, "manifests/"));
        var store = new ContentStore(faulty, CONFIG, clock);
        assertThatThrownBy(() -> store.put(data)).isInstanceOfSatisfying(StasisException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.RUNTIME_FAILED);
            assertThat(e.details()).containsEntry("step", "put manifest").containsEntry("attempts", 4);
            assertThat(e.getMessage()).contains("injected fault");
        });
        assertThat(store.manifests()).isEmpty();
    }

    @Test
    void aLastingChunkFailureStopsThePutBeforeItsManifest() {
        faulty.with(FaultyBlobStore.failAlways(PUT, "chunks/"));
        var store = new ContentStore(faulty, CONFIG, clock);
        assertThatThrownBy(() -> store.put(data)).isInstanceOf(StasisException.class).hasMessageContaining("put chunk");
        assertThat(faulty.calls(PUT)).isLessThanOrEqualTo(4 * (CONFIG.uploadConcurrency() + 1));
        assertThat(real.listAll("manifests/")).isEmpty();
    }

    @Test
    void aCrashBetweenTheChunksAndTheManifestLeavesNothingVisible() {
        faulty.with(FaultyBlobStore.crashAt(PUT, "manifests/", 1));
        assertCrashLeavesNothingVisible();
    }

    @Test
    void aCrashAmongTheChunksLeavesNothingVisible() {
        faulty.with(FaultyBlobStore.crashAt(PUT, "chunks/", 5));
        assertCrashLeavesNothingVisible();
    }

    private void assertCrashLeavesNothingVisible() {
        var doomed = new ContentStore(faulty, CONFIG, clock, "host-a");
        assertThatThrownBy(() -> doomed.put(data)).isInstanceOf(SimulatedCrash.class);
        assertThat(real.listAll("chunks/").count()).as("chunks written before the crash").isPositive();

        // The restarted process (same holder: it clears the lock its dead run left) sees no stream, and the GC
        // (once the grace period has passed) removes the orphans.
        var restarted = new ContentStore(real, CONFIG, clock, "host-a");
        assertThat(real.listAll("locks/").count()).as("the dead run's lock").isOne();
        restarted.clearOwnLocks();
        assertThat(restarted.manifests()).isEmpty();
        assertThat(real.listAll("manifests/")).isEmpty();
        assertThat(restarted.gc(Set.of()).chunksDeleted()).isZero(); // still within the grace period
        clock.advance(CONFIG.gcGrace().plusMinutes(1));
        GcReport report = restarted.gc(Set.of());
        assertThat(report.chunksDeleted()).isPositive();
        assertThat(restarted.usage()).isEqualTo(new StoreUsage(0, 0, 0));

        // And the same stream stores fine afterwards.
        var put = restarted.put(data);
        assertThat(TestData.readAll(restarted.open(put.manifest()))).isEqualTo(data);
    }
}
