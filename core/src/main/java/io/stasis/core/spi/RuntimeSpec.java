package io.stasis.core.spi;

import io.stasis.core.network.NetworkAttachment;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.SandboxId;
import java.nio.file.Path;
import java.util.Optional;

/**
 * What a runtime needs to start a sandbox.
 *
 * @param id        the sandbox
 * @param root      its writable root filesystem on the host
 * @param hostname  the hostname inside
 * @param resources the cgroup limits
 * @param network   the link to plug into its network namespace; without one it has only loopback
 */
public record RuntimeSpec(SandboxId id, Path root, String hostname, Resources resources, Optional<NetworkAttachment> network) {

    public RuntimeSpec(SandboxId id, Path root, String hostname, Resources resources) {
        this(id, root, hostname, resources, Optional.empty());
    }

    public RuntimeSpec withNetwork(NetworkAttachment attachment) {
        return new RuntimeSpec(id, root, hostname, resources, Optional.of(attachment));
    }
}
