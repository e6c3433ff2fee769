package io.stasis.storage.btrfs;

import io.stasis.host.MountInfo;
import io.stasis.host.Mounts;
import io.stasis.host.ToolRunner;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A pool on a small sparse image in a test's data directory, and the store on it. {@link #close()}
 * deletes every root and checkpoint snapshot and unmounts, and forces the unmount and loop detach if that failed, so a
 * failing test leaves nothing behind.
 */
final class PoolFixture implements AutoCloseable {
    static final long IMAGE_SIZE = 1L << 30;
    /** The disk limit of the tests' roots when the limit is not what they test: more than the image holds. */
    static final long DISK = 4L << 30;

    final Path dataDir;
    private final long imageSize;
    BtrfsPool pool;
    BtrfsRootStore store;

    private PoolFixture(Path dataDir, long imageSize) {
        this.dataDir = dataDir;
        this.imageSize = imageSize;
    }

    static PoolFixture open(Path dataDir) {
        return open(dataDir, IMAGE_SIZE);
    }

    /** A pool whose (sparse) image has room for {@code imageSize} bytes. */
    static PoolFixture open(Path dataDir, long imageSize) {
        var fixture = new PoolFixture(dataDir, imageSize);
        fixture.reopen();
        return fixture;
    }

    /** Closes the pool (which stays mounted) and opens it again, as a service restart would. */
    void reopen() {
        if (pool != null) pool.close();
        pool = BtrfsPool.open(BtrfsPoolConfig.image(dataDir, imageSize));
        store = new BtrfsRootStore(pool);
    }

    Path mountPoint() {
        return dataDir.resolve("btrfs");
    }

    Path image() {
        return dataDir.resolve("roots.img");
    }

    List<Path> loopDevices() {
        return LoopDevices.fromSystem().backedBy(image());
    }

    boolean mounted() {
        return MountInfo.read().at(mountPoint()).isPresent();
    }

    /** {@code losetup -a}, the way an operator would look. */
    static String losetupAll() throws Exception {
        return ToolRunner.run(List.of(ToolRunner.locate("losetup").toString(), "-a"), Duration.ofSeconds(10)).stdoutText();
    }

    /** Closes every pool, the last opened first, each even if another failed; then fails with the first failure. */
    static void closeAll(List<PoolFixture> pools) {
        AssertionError first = null;
        for (var fixture : pools.reversed()) {
            try {
                fixture.close();
            } catch (AssertionError e) {
                if (first == null) first = e;
                else first.addSuppressed(e);
            }
        }
        pools.clear();
        if (first != null) throw first;
    }

    @Override
    public void close() {
        var errors = new ArrayList<Throwable>();
        try {
            if (store != null && mounted()) {
                for (var id : store.listRoots()) store.deleteRoot(id);
                for (var checkpoint : store.listSnapshots()) store.deleteSnapshot(checkpoint);
            }
            if (pool != null) pool.unmountIfEmpty();
        } catch (RuntimeException e) {
            errors.add(e);
        }
        if (pool != null) pool.close();
        // Last resort: whatever happened above, the test must not leak a mount or loop device.
        try {
            while (mounted()) Mounts.fromSystem().unmount(mountPoint());
            for (Path device : loopDevices()) LoopDevices.fromSystem().detach(device);
        } catch (RuntimeException e) {
            errors.add(e);
        }
        if (!errors.isEmpty()) {
            var first = new AssertionError("pool cleanup failed", errors.getFirst());
            errors.stream().skip(1).forEach(first::addSuppressed);
            throw first;
        }
    }
}
