package io.stasis.core.lifecycle;

import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.RootStore;
import io.stasis.core.spi.SandboxMeters;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What a sandbox uses now, as its metrics show it: the share of its CPUs it used since it was last
 * read (since it was made, at the first reading), its CPU time in all, its memory in RAM and in
 * swap against its limit, and its disk against its disk size. Reading does not wake it: a paused or
 * standby sandbox shows what it holds, a hibernated or stopped one no memory (its disk still counts).
 */
public final class SandboxUsage {
    /** Readings kept for the next one's CPU share; older ones (of sandboxes nobody reads any more) are dropped. */
    private static final int KEPT_READINGS = 10_000;

    private final SandboxService sandboxes;
    private final SandboxMeters meters;
    private final RootStore roots;
    private final Clock clock;
    private final Map<SandboxId, Reading> last = new ConcurrentHashMap<>();

    public SandboxUsage(SandboxService sandboxes, SandboxMeters meters, RootStore roots, Clock clock) {
        this.sandboxes = sandboxes;
        this.meters = meters;
        this.roots = roots;
        this.clock = clock;
    }

    /**
     * @param at             when it was read
     * @param cpus           its CPU limit
     * @param cpuUsedPercent of its CPUs (100 = all of them busy), since the reading before
     * @param cpuTime        CPU time its processes used so far (since its processes last started)
     * @param memoryBytes    memory it holds in RAM
     * @param swappedBytes   memory of it in swap (standby)
     * @param memoryLimitBytes its memory limit
     * @param disk             what counts against its disk size (none known: zeros)
     * @param diskLimitBytes   its disk size
     */
    public record Reading(Instant at, double cpus, double cpuUsedPercent, Duration cpuTime, long memoryBytes, long swappedBytes,
                          long memoryLimitBytes, RootStore.DiskUsage disk, long diskLimitBytes) {
    }

    /** Reads the sandbox with this id or name (of the caller's tenant: resolve it before). */
    public Reading read(String idOrName) {
        Sandbox sandbox = sandboxes.get(idOrName);
        Instant now = clock.instant();
        double cpus = sandbox.resources().cpus();
        long limit = (long) sandbox.resources().memoryMb() << 20;
        var disk = roots.diskUsage(sandbox.id()).orElse(new RootStore.DiskUsage(0, 0));
        long diskLimit = sandbox.resources().diskBytes();
        if (!sandbox.state().hasProcesses()) {
            last.remove(sandbox.id());
            return new Reading(now, cpus, 0, Duration.ZERO, 0, 0, limit, disk, diskLimit);
        }
        Duration cpu = meters.cpuUsage(sandbox.id());
        var before = last.get(sandbox.id());
        Instant since = before == null ? sandbox.createdAt() : before.at();
        Duration used = before == null || cpu.compareTo(before.cpuTime()) < 0 ? cpu : cpu.minus(before.cpuTime()); // a restart resets the count
        var reading = new Reading(now, cpus, share(used, Duration.between(since, now), cpus), cpu, meters.residentBytes(sandbox.id()),
                meters.swappedBytes(sandbox.id()), limit, disk, diskLimit);
        if (last.size() >= KEPT_READINGS) last.clear();
        last.put(sandbox.id(), reading);
        return reading;
    }

    /** {@code used} CPU time over {@code elapsed} wall time on {@code cpus} CPUs, in percent, at most 100. */
    static double share(Duration used, Duration elapsed, double cpus) {
        if (elapsed.isZero() || elapsed.isNegative() || cpus <= 0) return 0;
        double percent = 100.0 * used.toNanos() / (elapsed.toNanos() * cpus);
        return Math.min(100, Math.max(0, percent));
    }
}
