package io.stasis.blob.content.archive;

import io.stasis.blob.content.ContentStore;
import io.stasis.blob.content.ContentStoreConfig;
import io.stasis.blob.local.LocalBlobStore;
import io.stasis.core.spi.VolumeArchive;
import io.stasis.testkit.VolumeArchiveSuite;
import java.nio.file.Path;
import java.time.Clock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

/** The archive of volume syncs, on content-addressed chunks in a directory blob store. */
class ContentVolumeArchiveContractTest extends VolumeArchiveSuite {
    @TempDir
    Path dir;
    private LocalBlobStore blobs;

    @Override
    protected VolumeArchive newArchive() {
        blobs = new LocalBlobStore(dir);
        return new ContentVolumeArchive(blobs, new ContentStore(blobs, ContentStoreConfig.DEFAULT, Clock.systemUTC(), "test-holder"));
    }

    @AfterEach
    void close() {
        blobs.close();
    }
}
