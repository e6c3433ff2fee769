package io.stasis.testkit.fake;

import io.stasis.core.spi.VolumeArchive;
import io.stasis.testkit.VolumeArchiveSuite;

/** The fake archive keeps the same contract as the content-addressed one ({@code ContentVolumeArchiveContractTest}). */
class InMemoryVolumeArchiveContractTest extends VolumeArchiveSuite {
    @Override
    protected VolumeArchive newArchive() {
        return new InMemoryVolumeArchive();
    }
}
