package io.stasis.runtime.runc;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.SandboxId;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * Changes the limits of a running sandbox by writing its cgroup files directly: microseconds,
 * where {@code runc update} costs a process start. Knows the v1 layout (one hierarchy per
 * controller) and the unified v2 one.
 */
final class CgroupLimits {
    private static final Path ROOT = Path.of("/sys/fs/cgroup");
    private static final long CPU_PERIOD_US = 100_000;
    /** The usual CPU weight: cgroup v1's {@code cpu.shares} of a nice-0 task, v2's {@code cpu.weight}. */
    private static final int USUAL_SHARES = 1024, USUAL_WEIGHT = 100;
    /**
     * The weight of a sandbox started ahead of demand, 1/16 of the usual: on a busy host its start
     * yields to the sandboxes and calls of the moment, yet still gets a share, where at the minimum
     * weight (2) it could wait out its start timeout. (It did not measurably change a young gVisor
     * sandbox's checkpoint and fork beside the pool's refill: what cost those was the idle warm
     * sentries, see {@link RunscRuntime#create}.)
     */
    static final int BACKGROUND_SHARES = 64;

    private CgroupLimits() {
    }

    /** @param cgroupPath the sandbox's cgroup, as in its OCI config ({@code /stasis/<id>}) */
    static void apply(SandboxId id, String cgroupPath, Resources resources) {
        long memory = (long) resources.memoryMb() * 1024 * 1024;
        long quota = Math.round(resources.cpus() * CPU_PERIOD_US);
        if (Files.exists(ROOT.resolve("cgroup.controllers"))) {
            Path dir = SandboxCgroups.dir("", cgroupPath);
            write(id, dir.resolve("memory.max"), Long.toString(memory), resources);
            write(id, dir.resolve("cpu.max"), quota + " " + CPU_PERIOD_US, resources);
            write(id, dir.resolve("pids.max"), Integer.toString(resources.pids()), resources);
        } else {
            // memory+swap (memsw) equals memory, as at the start (OciSpec); memsw may never be below
            // memory, so the larger side moves first.
            Path memoryDir = SandboxCgroups.dir("memory", cgroupPath);
            Path memsw = memoryDir.resolve("memory.memsw.limit_in_bytes");
            boolean swapAccounting = Files.exists(memsw);
            if (swapAccounting && memory > readLong(memsw)) write(id, memsw, Long.toString(memory), resources);
            write(id, memoryDir.resolve("memory.limit_in_bytes"), Long.toString(memory), resources);
            if (swapAccounting) write(id, memsw, Long.toString(memory), resources);
            Path cpuDir = SandboxCgroups.dir("cpu", cgroupPath);
            write(id, cpuDir.resolve("cpu.cfs_period_us"), Long.toString(CPU_PERIOD_US), resources);
            write(id, cpuDir.resolve("cpu.cfs_quota_us"), Long.toString(quota), resources);
            write(id, SandboxCgroups.dir("pids", cgroupPath).resolve("pids.max"), Integer.toString(resources.pids()), resources);
        }
    }

    /** The usual CPU weight again, for a sandbox started in the background that now has an owner. */
    static void foreground(SandboxId id, String cgroupPath) {
        if (Files.exists(ROOT.resolve("cgroup.controllers")))
            write(id, SandboxCgroups.dir("", cgroupPath).resolve("cpu.weight"), Integer.toString(USUAL_WEIGHT), null);
        else write(id, SandboxCgroups.dir("cpu", cgroupPath).resolve("cpu.shares"), Integer.toString(USUAL_SHARES), null);
    }

    /** CPU time used by the cgroup's tasks so far (v1 {@code cpuacct.usage}, v2 {@code cpu.stat}). */
    static Duration cpuUsage(String cgroupPath) {
        try {
            if (Files.exists(ROOT.resolve("cgroup.controllers"))) {
                for (String line : Files.readAllLines(SandboxCgroups.dir("", cgroupPath).resolve("cpu.stat")))
                    if (line.startsWith("usage_usec ")) return Duration.ofNanos(Long.parseLong(line.substring(11).strip()) * 1000);
                return Duration.ZERO;
            }
            return Duration.ofNanos(Long.parseLong(Files.readString(SandboxCgroups.dir("cpuacct", cgroupPath).resolve("cpuacct.usage")).strip()));
        } catch (IOException | NumberFormatException e) {
            return Duration.ZERO;
        }
    }

    private static long readLong(Path file) {
        try {
            return Long.parseLong(Files.readString(file).strip());
        } catch (IOException | NumberFormatException e) {
            return Long.MAX_VALUE;
        }
    }

    private static void write(SandboxId id, Path file, String value, Resources resources) {
        try {
            Files.writeString(file, value);
        } catch (IOException e) {
            if (file.getFileName().toString().startsWith("memory") && String.valueOf(e.getMessage()).contains("busy"))
                throw new StasisException(ErrorCode.INVALID_REQUEST, "the sandbox already uses more memory than "
                        + resources.memoryMb() + " MB", Map.of("sandbox", id.value(), "field", "resources.memoryMb"));
            throw StasisException.runtimeFailed(id.value(), "set limit " + file.getFileName(), String.valueOf(e.getMessage()), e);
        }
    }
}
