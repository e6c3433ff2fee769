package io.stasis.runtime.runc;

import io.stasis.core.spi.FileOwner;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * How the gVisor runtime is set up on this host.
 *
 * @param runsc        the runsc binary ({@code ./stasis setup} installs it at /opt/stasis/runsc/runsc)
 * @param stateDir     where the runtime keeps its own state (runsc's state, bundles, logs, the init binary)
 * @param cgroupParent cgroup under which every sandbox gets its own ({@code <parent>/<sandbox id>})
 * @param idMapBase    host uid and gid that root inside a sandbox maps to, as for runc
 * @param toolTimeout  how long one runsc command may take
 * @param imageStateDir the state directory whose image store (its {@code images}) this runtime uses:
 *                     runc's, where one service runs both, so that one store holds every image
 */
public record RunscConfig(Path runsc, Path stateDir, String cgroupParent, int idMapBase, Duration toolTimeout, Path imageStateDir) {
    public static final Path INSTALLED = Path.of("/opt/stasis/runsc/runsc");

    /** A gVisor runtime with an image store of its own. */
    public RunscConfig(Path runsc, Path stateDir, String cgroupParent, int idMapBase, Duration toolTimeout) {
        this(runsc, stateDir, cgroupParent, idMapBase, toolTimeout, stateDir);
    }

    /**
     * Whether {@code ./stasis setup} installed runsc here and saw it run a sandbox (its stamp,
     * {@code .verified}, next to the binary): where the kernel refuses runsc's user namespace, the
     * install is left unstamped.
     */
    public static boolean installedAndVerified() {
        return Files.isExecutable(INSTALLED) && Files.isRegularFile(INSTALLED.resolveSibling(".verified"));
    }

    public FileOwner rootOwner() {
        return new FileOwner(idMapBase, idMapBase);
    }
}
