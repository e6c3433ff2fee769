package io.stasis.core.spi;

import io.stasis.core.sandbox.SandboxId;
import java.time.Duration;

/** What a sandbox uses now, for idle detection and the usage figures. */
public interface SandboxMeters {
    /** Bytes of memory the sandbox holds in RAM now (its cgroup's charge). */
    long residentBytes(SandboxId id);

    /** Bytes of the sandbox's memory in swap now. */
    long swappedBytes(SandboxId id);

    /** CPU time used by all the sandbox's processes so far, for idle detection. */
    Duration cpuUsage(SandboxId id);

    /** Processes of the sandbox the host's out-of-memory killer ended so far; 0 once the sandbox is destroyed. */
    long oomKills(SandboxId id);
}
