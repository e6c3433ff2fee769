package io.stasis.runtime.runc;

import io.stasis.core.spi.FileOwner;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * How the runc runtime is set up on this host.
 *
 * @param runc         the runc binary
 * @param criu         a CRIU >= 4.2 binary for checkpoints, if installed
 * @param stateDir     where the runtime keeps its own state (runc's state, bundles, logs, the init binary)
 * @param cgroupParent cgroup under which every sandbox gets its own ({@code <parent>/<sandbox id>})
 * @param idMapBase    host uid and gid that root inside a sandbox maps to; 65536 ids are mapped
 * @param toolTimeout  how long one runc command may take
 * @param sharePages   whether the processes CRIU restores (forks, resumes) have their identical pages merged by
 *                     the kernel (KSM): memory saved across forks of one checkpoint, at the price of a
 *                     side channel between sandboxes (see docs/SECURITY.md)
 */
public record RuncConfig(Path runc, Optional<Path> criu, Path stateDir, String cgroupParent, int idMapBase, Duration toolTimeout,
                         boolean sharePages) {

    public RuncConfig(Path runc, Optional<Path> criu, Path stateDir, String cgroupParent, int idMapBase, Duration toolTimeout) {
        this(runc, criu, stateDir, cgroupParent, idMapBase, toolTimeout, false);
    }
    public static final int ID_MAP_SIZE = 65536;

    public static RuncConfig defaults(Path stateDir) {
        return new RuncConfig(Path.of("/usr/sbin/runc"), Optional.empty(), stateDir, "stasis", 100_000, Duration.ofSeconds(30));
    }

    /** The host owner of files that root inside a sandbox owns. */
    public FileOwner rootOwner() {
        return new FileOwner(idMapBase, idMapBase);
    }
}
