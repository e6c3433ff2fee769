package io.stasis.testkit.fake;

import io.stasis.core.spi.BlobStore;
import io.stasis.testkit.BlobStoreSuite;

/** The BlobStore contract held by the in-memory fake. */
class InMemoryBlobStoreTest extends BlobStoreSuite {
    @Override
    protected BlobStore newStore() {
        return new InMemoryBlobStore();
    }
}
