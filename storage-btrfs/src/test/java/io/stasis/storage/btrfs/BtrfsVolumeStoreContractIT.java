package io.stasis.storage.btrfs;

import io.stasis.core.spi.FileOwner;
import io.stasis.core.spi.VolumeStore;
import io.stasis.testkit.VolumeStoreSuite;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;

/** The VolumeStore contract on btrfs: each store a pool of its own, its scratch directory beside the pool. */
@Tag("root")
class BtrfsVolumeStoreContractIT extends VolumeStoreSuite {
    @TempDir
    Path dataDir;
    private final List<PoolFixture> pools = new ArrayList<>();

    @Override
    protected VolumeStore newStore() {
        try {
            Path dir = Files.createDirectory(dataDir.resolve("pool-" + pools.size()));
            var fixture = PoolFixture.open(dir);
            pools.add(fixture);
            return new BtrfsVolumeStore(fixture.pool, dir.resolve("scratch"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The uid and gid root inside a sandbox maps to, as in production: not the test's own. */
    @Override
    protected FileOwner owner() {
        return new FileOwner(100000, 100000);
    }

    @AfterEach
    void closePools() {
        PoolFixture.closeAll(pools); // before @TempDir is deleted: never delete files under a live mount
    }
}
