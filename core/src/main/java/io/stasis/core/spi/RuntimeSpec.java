package io.stasis.core.spi;

import io.stasis.core.network.NetworkAttachment;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.RuntimeKind;
import io.stasis.core.sandbox.SandboxId;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What a runtime needs to start a sandbox.
 *
 * @param id        the sandbox
 * @param root      its writable root filesystem on the host
 * @param hostname  the hostname inside
 * @param resources the cgroup limits
 * @param network   the link to plug into its network namespace; without one it has only loopback
 * @param mounts    host directories (volumes) bind-mounted into it, in order
 * @param runtime   which runtime runs it (a runtime given another kind's spec refuses it)
 * @param background started ahead of demand (a warm sandbox, a spare): its processes run at a
 *                  fraction of the usual CPU weight until {@link SandboxRuntime#foreground}, so that
 *                  its start takes only what the calls of the moment leave; a runtime whose idle
 *                  sandboxes use CPU (gVisor's sentry) has a created one wait frozen until then
 */
public record RuntimeSpec(SandboxId id, Path root, String hostname, Resources resources, Optional<NetworkAttachment> network,
                          List<Mount> mounts, RuntimeKind runtime, boolean background) {

    /** A host directory that appears at {@code destination} inside the sandbox (absolute, normalized, validated by the caller). */
    public record Mount(Path source, String destination, boolean readOnly) {
        public Mount {
            Objects.requireNonNull(source);
            Objects.requireNonNull(destination);
        }
    }

    public RuntimeSpec {
        mounts = List.copyOf(mounts);
        Objects.requireNonNull(runtime);
    }

    /** A sandbox started for a caller waiting on it. */
    public RuntimeSpec(SandboxId id, Path root, String hostname, Resources resources, Optional<NetworkAttachment> network,
                       List<Mount> mounts, RuntimeKind runtime) {
        this(id, root, hostname, resources, network, mounts, runtime, false);
    }

    /** A runc sandbox (the tests' and the runtimes' own shorthand). */
    public RuntimeSpec(SandboxId id, Path root, String hostname, Resources resources, Optional<NetworkAttachment> network, List<Mount> mounts) {
        this(id, root, hostname, resources, network, mounts, RuntimeKind.RUNC);
    }

    public RuntimeSpec(SandboxId id, Path root, String hostname, Resources resources, Optional<NetworkAttachment> network) {
        this(id, root, hostname, resources, network, List.of());
    }

    public RuntimeSpec(SandboxId id, Path root, String hostname, Resources resources) {
        this(id, root, hostname, resources, Optional.empty(), List.of());
    }

    public RuntimeSpec withNetwork(NetworkAttachment attachment) {
        return new RuntimeSpec(id, root, hostname, resources, Optional.of(attachment), mounts, runtime, background);
    }

    public RuntimeSpec withMounts(List<Mount> more) {
        return new RuntimeSpec(id, root, hostname, resources, network, more, runtime, background);
    }

    public RuntimeSpec withResources(Resources other) {
        return new RuntimeSpec(id, root, hostname, other, network, mounts, runtime, background);
    }

    public RuntimeSpec withRuntime(RuntimeKind kind) {
        return new RuntimeSpec(id, root, hostname, resources, network, mounts, kind, background);
    }

    /** This sandbox, started ahead of demand (see {@code background}). */
    public RuntimeSpec inBackground() {
        return new RuntimeSpec(id, root, hostname, resources, network, mounts, runtime, true);
    }
}
