package io.stasis.blob.content;

import io.stasis.blob.local.LocalBlobStore;
import io.stasis.core.spi.BlobStore;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** The lock protocol on a local directory. */
class StoreLocksLocalTest extends StoreLocksContract {
    @TempDir
    Path dir;

    @Override
    BlobStore newBackend() {
        return new LocalBlobStore(dir);
    }
}
