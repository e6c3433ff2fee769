package io.stasis.core.volume;

import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.RuntimeSpec;
import java.util.List;

/** What the sandbox services need of volumes: which a sandbox mounts, and where they are on the host. */
public interface SandboxVolumes {
    List<VolumeMount> mountsOf(SandboxId sandbox);

    void setMounts(SandboxId sandbox, List<VolumeMount> mounts);

    /** The bind mounts for the runtime; {@code invalid_state} if a volume is gone from this host. */
    List<RuntimeSpec.Mount> hostMounts(List<VolumeMount> mounts);

    default List<RuntimeSpec.Mount> hostMountsOf(SandboxId sandbox) {
        return hostMounts(mountsOf(sandbox));
    }
}
