package io.stasis.runtime.runc;

import io.stasis.core.spi.FileOwner;
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
 */
public record RunscConfig(Path runsc, Path stateDir, String cgroupParent, int idMapBase, Duration toolTimeout) {
    public static final Path INSTALLED = Path.of("/opt/stasis/runsc/runsc");

    public FileOwner rootOwner() {
        return new FileOwner(idMapBase, idMapBase);
    }
}
