package io.stasis.blob.content.archive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.blob.content.ContentStore;
import io.stasis.blob.content.ContentStoreConfig;
import io.stasis.blob.local.LocalBlobStore;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.journal.FaultPoints;
import io.stasis.core.volume.VolumeId;
import io.stasis.core.volume.VolumeSyncId;
import io.stasis.testkit.Await;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The service's live set is what the store's records name, and a record it cannot read stops the
 * collection before anything is deleted (keep garbage rather than lose a stream).
 */
class BlobGcTest {
    @TempDir
    Path dir;
    private LocalBlobStore blobs;
    private ContentStore content;
    private ContentVolumeArchive volumes;
    private BlobGc gc;

    @BeforeEach
    void open() {
        blobs = new LocalBlobStore(dir);
        content = new ContentStore(blobs, ContentStoreConfig.DEFAULT.withGcGrace(Duration.ZERO), Clock.systemUTC(), "test-holder");
        volumes = new ContentVolumeArchive(blobs, content);
        gc = new BlobGc(content, "test-holder", new BlobCheckpointArchive(content, blobs), volumes, Optional.empty(), FaultPoints.NONE,
                Clock.systemUTC());
    }

    @AfterEach
    void close() {
        blobs.close();
    }

    @Test
    void keepsWhatASyncRecordNamesAndCollectsTheRest() throws Exception {
        String named = sync(bytes(1));
        var garbage = content.put(bytes(2)).manifest();

        var report = gc.collect().report();
        assertThat(report.manifestsDeleted()).isEqualTo(1);
        assertThat(content.exists(garbage)).isFalse();
        assertThat(content.manifests()).singleElement().satisfies(m -> assertThat(m.hex()).isEqualTo(named));
        assertThat(gc.status().lastGc()).hasValueSatisfying(o -> assertThat(o.report()).isEqualTo(report));
    }

    @Test
    void anUnreadableDescriptorStopsTheCollectionBeforeAnyDelete() {
        var garbage = content.put(bytes(3)).manifest();
        blobs.put("checkpoints/" + CheckpointId.random().value() + ".json", "{\"not\": \"a descriptor".getBytes(StandardCharsets.UTF_8));

        assertThatThrownBy(gc::collect).isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL));
        assertThat(content.exists(garbage)).as("nothing deleted").isTrue();
        assertThat(content.locks()).as("the exclusive lock is released").isEmpty();
    }

    @Test
    void anUnreadableSyncRecordStopsTheCollectionBeforeAnyDelete() {
        var garbage = content.put(bytes(4)).manifest();
        blobs.put("volumes/volume-syncs/" + VolumeSyncId.random().value(), "format=1\nstreams=not-a-manifest\n".getBytes(StandardCharsets.UTF_8));

        assertThatThrownBy(gc::collect).isInstanceOf(StasisException.class).hasMessageContaining("volume sync record");
        assertThat(content.exists(garbage)).as("nothing deleted").isTrue();
    }

    @Test
    void collectsEveryIntervalOnItsOwnUntilClosed() {
        var garbage = content.put(bytes(5)).manifest();
        try (var periodic = new BlobGc(content, "test-holder", new BlobCheckpointArchive(content, blobs), volumes,
                Optional.of(Duration.ofMillis(20)), FaultPoints.NONE, Clock.systemUTC())) {
            periodic.start();
            Await.until("a periodic collection", Duration.ofSeconds(30), () -> periodic.status().lastGc().isPresent());
        }
        assertThat(content.exists(garbage)).isFalse();
    }

    /** Stores a stream and the record of a sync naming it, as a volume sync does; returns the stream's id. */
    private String sync(byte[] data) throws Exception {
        Path file = Files.write(dir.resolve("stream-" + data.length), data);
        var id = VolumeSyncId.random();
        try (var upload = volumes.beginUpload()) {
            var stored = upload.putStream(file);
            upload.putRecord("volume-syncs/" + id.value(), ("format=1\nid=" + id.value() + "\nvolume=" + VolumeId.random().value()
                    + "\nvolumeName=data\nsizeMb=64\nstreams=" + stored.id() + "\nparent=\nstreamBytes=" + stored.bytes()
                    + "\ncreatedAt=2026-01-01T00:00:00Z\n").getBytes(StandardCharsets.UTF_8));
            return stored.id();
        } finally {
            Files.delete(file);
        }
    }

    private static byte[] bytes(long seed) {
        byte[] data = new byte[300_000];
        new Random(seed).nextBytes(data);
        return data;
    }
}
