package io.stasis.runtime.runc;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.SandboxRuntime;
import io.stasis.storage.btrfs.BtrfsPool;
import io.stasis.storage.btrfs.BtrfsPoolConfig;
import io.stasis.storage.btrfs.BtrfsRootStore;
import io.stasis.templates.TinyTemplate;
import io.stasis.testkit.HostLeaks;
import io.stasis.testkit.IsolationSuite;
import io.stasis.core.spi.TemplateRecipe;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Comparator;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The runtime suites against runc, on a real btrfs pool with the busybox template. */
class RuncRuntimeIT extends IsolationSuite {
    private static Path dataDir;
    private static BtrfsPool pool;
    private static BtrfsRootStore roots;
    private static RuncRuntime runtime;

    @BeforeAll
    static void setUp() throws IOException {
        // Root inside the sandbox is an unprivileged host uid: it must be able to traverse to its root.
        dataDir = Files.createTempDirectory("stasis-runc-it", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx--x--x")));
        pool = BtrfsPool.open(BtrfsPoolConfig.image(dataDir, 4L << 30));
        roots = new BtrfsRootStore(pool);
        var config = RuncConfig.defaults(dataDir.resolve("runtime"));
        runtime = new RuncRuntime(config);
        roots.installTemplate(new TinyTemplate(), config.rootOwner(), TemplateRecipe.Progress.NONE);
    }

    @AfterAll
    static void tearDown() throws IOException {
        runtime.close();
        roots.deleteTemplate("tiny");
        assertThat(pool.unmountIfEmpty()).as("pool unmounted").isTrue();
        pool.close();
        assertThat(HostLeaks.mountsUnder(dataDir)).isEmpty();
        assertThat(HostLeaks.loopDevicesBackedBy(dataDir)).isEmpty();
        try (Stream<Path> walk = Files.walk(dataDir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) Files.delete(p);
        }
    }

    @Override
    protected SandboxRuntime runtime() {
        return runtime;
    }

    @Override
    protected Path newRoot(SandboxId id) {
        return roots.createRoot(id, "tiny");
    }

    @Override
    protected void deleteRoot(SandboxId id) {
        roots.deleteRoot(id);
    }
}
