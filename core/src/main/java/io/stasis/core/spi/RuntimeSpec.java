package io.stasis.core.spi;

import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.SandboxId;
import java.nio.file.Path;

/**
 * What a runtime needs to start a sandbox.
 *
 * @param id        the sandbox
 * @param root      its writable root filesystem on the host
 * @param hostname  the hostname inside
 * @param resources the cgroup limits
 */
public record RuntimeSpec(SandboxId id, Path root, String hostname, Resources resources) {
}
