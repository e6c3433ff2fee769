package io.stasis.blob.content;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.luben.zstd.Zstd;
import io.stasis.blob.local.LocalBlobStore;
import io.stasis.core.blob.ChunkRef;
import io.stasis.core.blob.FastCdc;
import io.stasis.core.blob.ManifestId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Stored bytes that are not what their id says are never returned: each way a chunk or manifest
 * can go bad fails the read loudly, naming the stream and the chunk.
 */
class VerificationTest {
    @TempDir
    Path dir;
    private LocalBlobStore blobs;
    private ContentStore store;
    private byte[] data;
    private ManifestId id;
    private List<ChunkRef> chunks;

    @BeforeEach
    void storeAStream() {
        blobs = new LocalBlobStore(dir);
        store = new ContentStore(blobs, ContentStoreConfig.DEFAULT.withChunker(new FastCdc(4096, 16384, 65536)), Clock.systemUTC());
        data = TestData.random(21, 400_000);
        id = store.put(data).manifest();
        chunks = store.chunks(id);
        assertThat(chunks).hasSizeGreaterThan(5);
    }

    @AfterEach
    void close() {
        blobs.close();
    }

    @Test
    void aChunkOverwrittenWithGarbageFailsTheReadThatReachesIt() {
        blobs.put(Layout.chunkKey(chunks.get(3).id()), TestData.random(99, 5000));
        assertReadFailsAtChunk(3, "not a zstd frame");
    }

    @Test
    void aChunkReplacedByAnotherValidFrameOfTheSameSizeIsCaughtByItsHash() {
        ChunkRef ref = chunks.get(2);
        byte[] impostor = TestData.random(98, ref.size());
        blobs.put(Layout.chunkKey(ref.id()), Zstd.compress(impostor, 3));
        assertReadFailsAtChunk(2, "does not hash to its id");
    }

    @Test
    void aChunkWithOneFlippedBitIsCaught() throws Exception {
        String key = Layout.chunkKey(chunks.get(4).id());
        byte[] stored;
        try (InputStream in = blobs.get(key).orElseThrow()) {
            stored = in.readAllBytes();
        }
        stored[stored.length / 2] ^= 0x10;
        blobs.put(key, stored);
        assertReadFailsAtChunk(4, "");
    }

    @Test
    void aMissingChunkFailsTheRead() {
        blobs.delete(Layout.chunkKey(chunks.get(1).id()));
        assertReadFailsAtChunk(1, "missing");
    }

    @Test
    void aCorruptManifestIsRefusedBeforeAnyChunkIsRead() {
        byte[] other = TestData.random(5, 100);
        blobs.put(Layout.manifestKey(id), other);
        assertThatThrownBy(() -> store.open(id)).isInstanceOfSatisfying(StasisException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL);
            assertThat(e.getMessage()).contains(id.hex()).contains("does not hash to its id");
        });
    }

    /** Reads the stream in small steps: every byte returned is right, and the read reaching chunk {@code index} fails. */
    private void assertReadFailsAtChunk(int index, String problem) {
        long start = chunks.subList(0, index).stream().mapToLong(ChunkRef::size).sum();
        long read = 0;
        try (InputStream in = store.open(id)) {
            byte[] buf = new byte[1000];
            while (true) {
                int n = in.read(buf);
                if (n < 0) throw new AssertionError("the whole stream was read despite a bad chunk " + index);
                for (int i = 0; i < n; i++)
                    if (buf[i] != data[(int) (read + i)]) throw new AssertionError("wrong byte returned at " + (read + i));
                read += n;
            }
        } catch (StasisException e) {
            assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL);
            assertThat(e.getMessage()).contains(id.hex()).contains(chunks.get(index).id().hex()).contains(problem);
            assertThat(e.details()).containsEntry("index", index).containsEntry("chunk", chunks.get(index).id().hex());
            assertThat(read).isLessThanOrEqualTo(start);
            return;
        } catch (Exception e) {
            throw new AssertionError("expected an internal StasisException, got " + e, e);
        }
    }
}
