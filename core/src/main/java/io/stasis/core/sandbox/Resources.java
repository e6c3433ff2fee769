package io.stasis.core.sandbox;

import io.stasis.core.error.StasisException;

/**
 * Limits enforced by the sandbox's cgroups.
 *
 * @param cpus     CPU time as a number of cores (0.1 .. 64), enforced as a CFS quota
 * @param memoryMb memory limit in MiB (16 .. 1 TiB); past it the kernel's OOM killer ends a process
 * @param pids     most tasks (processes and threads) at once (16 .. 1 000 000)
 */
public record Resources(double cpus, int memoryMb, int pids) {
    public static final Resources DEFAULT = new Resources(1.0, 1024, 512);

    public Resources {
        if (!(cpus >= 0.1 && cpus <= 64)) throw StasisException.invalid("resources.cpus", "must be between 0.1 and 64, was " + cpus);
        if (memoryMb < 16 || memoryMb > 1 << 20) throw StasisException.invalid("resources.memoryMb", "must be between 16 and 1048576, was " + memoryMb);
        if (pids < 16 || pids > 1_000_000) throw StasisException.invalid("resources.pids", "must be between 16 and 1000000, was " + pids);
    }

    /** Fills the fields a request left out from {@code defaults}. */
    public static Resources of(Double cpus, Integer memoryMb, Integer pids, Resources defaults) {
        return new Resources(cpus != null ? cpus : defaults.cpus(),
                memoryMb != null ? memoryMb : defaults.memoryMb(),
                pids != null ? pids : defaults.pids());
    }
}
