package io.stasis.runtime.runc;

import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.SandboxMeters;
import java.time.Duration;

/** What a sandbox uses now, read from its cgroups. */
final class CgroupMeters implements SandboxMeters {
    private final MemoryPager pager;
    private final SandboxCgroups cgroups;

    CgroupMeters(MemoryPager pager, SandboxCgroups cgroups) {
        this.pager = pager;
        this.cgroups = cgroups;
    }

    @Override
    public long residentBytes(SandboxId id) {
        return pager.charged(cgroups.path(id));
    }

    @Override
    public long swappedBytes(SandboxId id) {
        return pager.swapped(cgroups.path(id));
    }

    @Override
    public Duration cpuUsage(SandboxId id) {
        return CgroupLimits.cpuUsage(cgroups.path(id));
    }

    @Override
    public long oomKills(SandboxId id) {
        return pager.oomKills(cgroups.path(id));
    }
}
