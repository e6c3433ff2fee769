package io.stasis.storage.btrfs;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.FileOwner;
import io.stasis.core.spi.TemplateRecipe;
import io.stasis.testkit.TestRecipe;
import java.io.ByteArrayInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Root snapshots as streams: a full and an incremental {@code btrfs send} from one pool, received
 * in order into another pool that never saw them, hold the same files; an incremental stream is
 * small. Broken streams and the rest of the contract: RootStoreSuite.
 */
@Tag("root")
class BtrfsSendReceiveIT {
    private static final FileOwner OWNER = new FileOwner(100000, 100000);

    @TempDir
    Path here;
    @TempDir
    Path there;
    PoolFixture source;
    PoolFixture target;

    @BeforeEach
    void openPools() {
        source = PoolFixture.open(here);
        source.store.installTemplate(TestRecipe.of("tiny", "1"), OWNER, TemplateRecipe.Progress.NONE);
        target = PoolFixture.open(there);
    }

    @AfterEach
    void closePools() {
        try {
            if (target != null) target.close();
        } finally {
            if (source != null) source.close();
        }
    }

    @Test
    void aChainReceivedElsewhereHoldsTheSameFiles() throws Exception {
        var sandbox = SandboxId.random();
        Path root = source.store.createRoot(sandbox, "tiny", PoolFixture.DISK);
        byte[] big = new byte[8 << 20];
        new Random(1).nextBytes(big);
        Files.write(root.resolve("big"), big);
        Files.writeString(root.resolve("state"), "one");
        Files.writeString(root.resolve("gone"), "deleted before the second snapshot");
        var first = CheckpointId.random();
        source.store.snapshotRoot(sandbox, first);
        Files.writeString(root.resolve("state"), "two");
        Files.delete(root.resolve("gone"));
        var second = CheckpointId.random();
        source.store.snapshotRoot(sandbox, second);

        byte[] full = source.store.sendSnapshot(first, Optional.empty(), in -> in.readAllBytes());
        byte[] incremental = source.store.sendSnapshot(second, Optional.of(first), in -> in.readAllBytes());
        assertThat(full.length).isGreaterThan(big.length);
        assertThat(incremental.length).as("only what changed").isLessThan(64 << 10);

        target.store.receiveSnapshot(first, new ByteArrayInputStream(full));
        target.store.receiveSnapshot(second, new ByteArrayInputStream(incremental));
        assertThat(target.store.hasSnapshot(first)).isTrue();
        assertThat(target.store.listSnapshots()).containsExactlyInAnyOrder(first, second);
        var copy = SandboxId.random();
        Path restored = target.store.createRootFrom(copy, second, PoolFixture.DISK);
        assertThat(Files.readString(restored.resolve("state"))).isEqualTo("two");
        assertThat(Files.readAllBytes(restored.resolve("big"))).isEqualTo(big);
        assertThat(restored.resolve("gone")).doesNotExist();
        assertThat(Files.getOwner(restored.resolve("state")).getName()).isEqualTo(Files.getOwner(root.resolve("state")).getName());
        target.store.deleteRoot(copy);
        source.store.deleteRoot(sandbox);
    }
}
