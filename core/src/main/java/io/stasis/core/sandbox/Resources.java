package io.stasis.core.sandbox;

import io.stasis.core.error.StasisException;

/**
 * Limits of a sandbox: CPU, memory and tasks enforced by its cgroups, disk by its root filesystem.
 *
 * @param cpus     CPU time as a number of cores (0.1 .. 64), enforced as a CFS quota
 * @param memoryMb memory limit in MiB (16 .. 1 TiB); past it the kernel's OOM killer ends a process
 * @param pids     most tasks (processes and threads) at once (16 .. 1 000 000)
 * @param diskMb   room in MiB for what the sandbox writes itself (64 .. 16 TiB), like a container's
 *                 writable-layer size: the template's files and those a fork inherits do not count
 *                 (and deleting them frees nothing); what it wrote counts while it is in its root or
 *                 in one of its checkpoints. Past it writes fail with {@code EDQUOT} ("Disk quota
 *                 exceeded"); deleting files it wrote (and no checkpoint holds) makes room again.
 */
public record Resources(double cpus, int memoryMb, int pids, int diskMb) {
    /** The default disk size, 10 GiB (also what the catalog gives sandboxes recorded before disk limits). */
    public static final int DEFAULT_DISK_MB = 10 * 1024;
    public static final int MIN_DISK_MB = 64;
    public static final int MAX_DISK_MB = 16 << 20;
    public static final int MAX_CPUS = 64;
    public static final Resources DEFAULT = new Resources(1.0, 1024, 512, DEFAULT_DISK_MB);

    public Resources {
        if (!(cpus >= 0.1 && cpus <= MAX_CPUS)) throw StasisException.invalid("resources.cpus", "must be between 0.1 and " + MAX_CPUS + ", was " + cpus);
        if (memoryMb < 16 || memoryMb > 1 << 20) throw StasisException.invalid("resources.memoryMb", "must be between 16 and 1048576, was " + memoryMb);
        if (pids < 16 || pids > 1_000_000) throw StasisException.invalid("resources.pids", "must be between 16 and 1000000, was " + pids);
        if (diskMb < MIN_DISK_MB || diskMb > MAX_DISK_MB)
            throw StasisException.invalid("resources.diskMb", "must be between " + MIN_DISK_MB + " and " + MAX_DISK_MB + ", was " + diskMb);
    }

    /** With the default disk size. */
    public Resources(double cpus, int memoryMb, int pids) {
        this(cpus, memoryMb, pids, DEFAULT_DISK_MB);
    }

    /** Fills the fields a request left out from {@code defaults}. */
    public static Resources of(Double cpus, Integer memoryMb, Integer pids, Integer diskMb, Resources defaults) {
        return new Resources(cpus != null ? cpus : defaults.cpus(),
                memoryMb != null ? memoryMb : defaults.memoryMb(),
                pids != null ? pids : defaults.pids(),
                diskMb != null ? diskMb : defaults.diskMb());
    }

    /** {@link #diskMb} in bytes. */
    public long diskBytes() {
        return (long) diskMb << 20;
    }

    public Resources withDiskMb(int diskMb) {
        return new Resources(cpus, memoryMb, pids, diskMb);
    }
}
