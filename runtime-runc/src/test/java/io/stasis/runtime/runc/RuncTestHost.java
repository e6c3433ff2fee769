package io.stasis.runtime.runc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.TemplateRecipe;
import io.stasis.host.FileTrees;
import io.stasis.storage.btrfs.BtrfsPool;
import io.stasis.storage.btrfs.BtrfsPoolConfig;
import io.stasis.storage.btrfs.BtrfsRootStore;
import io.stasis.templates.TinyTemplate;
import io.stasis.testkit.HostLeaks;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Function;

/**
 * A real btrfs pool with the busybox template and a runtime on it, in a scratch directory: runc
 * with CRIU, or gVisor's runsc ({@link #gvisor}).
 */
final class RuncTestHost implements AutoCloseable {
    final Path dataDir;
    final BtrfsPool pool;
    final BtrfsRootStore roots;
    final InitRuntime runtime;

    RuncTestHost() throws IOException {
        this(defaults -> new RuncRuntime(new RuncConfig(defaults.runc(), criu(), defaults.stateDir(), defaults.cgroupParent(),
                defaults.idMapBase(), defaults.toolTimeout())));
    }

    /** A runc host whose runtime runs {@code criu} as its CRIU. */
    static RuncTestHost withCriu(Path criu) throws IOException {
        return new RuncTestHost(defaults -> new RuncRuntime(new RuncConfig(defaults.runc(), Optional.of(criu), defaults.stateDir(),
                defaults.cgroupParent(), defaults.idMapBase(), defaults.toolTimeout())));
    }

    /** A host whose runtime is gVisor's: the runsc `./stasis setup` installs, or the one named by STASIS_RUNSC. */
    static RuncTestHost gvisor() throws IOException {
        String env = System.getenv("STASIS_RUNSC");
        Path runsc = env != null && !env.isBlank() ? Path.of(env) : RunscConfig.INSTALLED;
        return new RuncTestHost(defaults -> new RunscRuntime(new RunscConfig(runsc, defaults.stateDir(), defaults.cgroupParent(),
                defaults.idMapBase(), defaults.toolTimeout())));
    }

    private RuncTestHost(Function<RuncConfig, InitRuntime> runtimeOn) throws IOException {
        // Root inside the sandbox is an unprivileged host uid: it must be able to traverse to its root.
        dataDir = Files.createTempDirectory("stasis-runc-it", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx--x--x")));
        pool = BtrfsPool.open(BtrfsPoolConfig.image(dataDir, 4L << 30));
        roots = new BtrfsRootStore(pool);
        var defaults = RuncConfig.defaults(dataDir.resolve("runtime"));
        runtime = runtimeOn.apply(defaults);
        roots.installTemplate(new TinyTemplate(), defaults.rootOwner(), TemplateRecipe.Progress.NONE);
    }

    /** The CRIU that `./stasis setup` installs, or the one named by STASIS_CRIU. */
    static Optional<Path> criu() {
        String env = System.getenv("STASIS_CRIU");
        Path path = env != null && !env.isBlank() ? Path.of(env) : Path.of("/opt/stasis/criu/criu");
        return Files.isExecutable(path) ? Optional.of(path) : Optional.empty();
    }

    /** The CRIU of {@link #criu()}; a test without it is skipped, saying what to run. */
    static Path criuOrSkip() {
        var criu = criu();
        assumeTrue(criu.isPresent(), "no CRIU at /opt/stasis/criu/criu or $STASIS_CRIU: run ./stasis setup");
        return criu.get();
    }

    Path root(SandboxId id) {
        return roots.root(id).orElseThrow();
    }

    /** A writable copy of a sandbox's root, the way the btrfs store makes one: a snapshot. */
    Path copyRoot(SandboxId source, SandboxId copy) {
        return viaSnapshot(source, checkpoint -> roots.createRootFrom(copy, checkpoint, Resources.DEFAULT.diskBytes()));
    }

    /** A writable copy of a sandbox's root in place of another's, whose old root the store puts aside. */
    Path replaceRoot(SandboxId id, SandboxId source) {
        return viaSnapshot(source, checkpoint -> roots.replaceRoot(id, checkpoint, Resources.DEFAULT.diskBytes()));
    }

    private Path viaSnapshot(SandboxId source, Function<CheckpointId, Path> branch) {
        var checkpoint = CheckpointId.random();
        roots.snapshotRoot(source, checkpoint);
        try {
            return branch.apply(checkpoint);
        } finally {
            roots.deleteSnapshot(checkpoint);
        }
    }

    @Override
    public void close() throws IOException {
        runtime.close();
        roots.deleteTemplate("tiny");
        assertThat(pool.unmountIfEmpty()).as("pool unmounted").isTrue();
        pool.close();
        assertThat(HostLeaks.mountsUnder(dataDir)).isEmpty();
        assertThat(HostLeaks.loopDevicesBackedBy(dataDir, Duration.ofSeconds(15))).isEmpty();
        FileTrees.deleteRecursively(dataDir);
    }
}
