package io.stasis.testkit.fake;

import io.stasis.core.spi.CheckpointArchive;
import io.stasis.testkit.CheckpointArchiveSuite;

/** The fake archive keeps the same contract as the blob-backed one ({@code BlobCheckpointArchiveContractTest}). */
class InMemoryCheckpointArchiveContractTest extends CheckpointArchiveSuite {
    @Override
    protected CheckpointArchive newArchive() {
        return new InMemoryCheckpointArchive();
    }
}
