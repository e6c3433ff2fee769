package io.stasis.blob.content.archive;

import io.stasis.blob.content.ContentStore;
import io.stasis.blob.content.ContentStoreConfig;
import io.stasis.blob.local.LocalBlobStore;
import io.stasis.core.spi.CheckpointArchive;
import io.stasis.testkit.CheckpointArchiveSuite;
import java.nio.file.Path;
import java.time.Clock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

/** The archive of durable checkpoints, on content-addressed chunks in a directory blob store. */
class BlobCheckpointArchiveContractTest extends CheckpointArchiveSuite {
    @TempDir
    Path dir;
    private LocalBlobStore blobs;

    @Override
    protected CheckpointArchive newArchive() {
        blobs = new LocalBlobStore(dir);
        var content = new ContentStore(blobs, ContentStoreConfig.DEFAULT, Clock.systemUTC(), "test-holder");
        return new BlobCheckpointArchive(content, blobs);
    }

    @AfterEach
    void close() {
        blobs.close();
    }
}
