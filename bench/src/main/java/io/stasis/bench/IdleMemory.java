package io.stasis.bench;

import io.stasis.sdk.Sandbox;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;

/**
 * Memory per idle {@code tiny} sandbox with N running.
 *
 * <p>The host's {@code MemAvailable} is read (median of several readings, after a pause) before
 * starting N sandboxes, with them running, and after deleting them. The drop on create and the
 * rise on delete each estimate the cost of N sandboxes; their mean is the <em>total</em> per
 * sandbox, and a steady drift of the machine's memory (other work ending, caches being reclaimed)
 * cancels out of it. The two halves are reported too: far apart, they say the machine was noisy.
 *
 * <p>The processes' own share is the sum of the PSS of each sandbox's processes (found by their
 * cgroup); total minus that is the <em>overhead</em> beyond the processes: kernel objects
 * (namespaces, mounts, cgroups, page tables), the root's metadata and the service's own growth.
 * Beside it: the growth of unreclaimable kernel memory, the RSS growth of this JVM (it hosts the
 * service, and the benchmark's client, a small part), and what each sandbox's memory cgroup is
 * charged.
 */
final class IdleMemory implements Scenario {
    /** The goal for the overhead beyond the processes, in MiB. */
    static final double OVERHEAD_TARGET_MB = 5;
    private static final double MIB = 1 << 20;
    private static final int READINGS = 7;
    private static final long READING_GAP_MS = 500;
    private static final long SETTLE_MS = 3000;

    @Override
    public String name() {
        return "memory";
    }

    @Override
    public ScenarioResult run(BenchContext context) throws Exception {
        int n = context.counts().idleSandboxes();
        var progress = context.progress();
        // Warm the create path (and the JVM's heap) first, so the "before" readings do not miss it.
        for (int i = 0; i < context.counts().warmup(); i++) context.service().create("tiny").delete();

        Reading before = read(progress, "before");
        var sandboxes = new ArrayList<Sandbox>();
        try {
            for (int i = 0; i < n; i++) {
                sandboxes.add(context.service().create("tiny"));
                progress.tick("idle sandboxes started", i + 1, n);
            }
            Reading with = read(progress, "with " + n + " idle");
            double[] pss = new double[n];
            double[] cgroup = new double[n];
            int processes = 0;
            for (int i = 0; i < n; i++) {
                String id = sandboxes.get(i).id();
                long sum = 0;
                for (long pid : HostMemory.processesOf(id)) {
                    sum += HostMemory.pss(pid).orElse(0);
                    processes++;
                }
                pss[i] = sum / MIB;
                cgroup[i] = HostMemory.cgroupUsage(PrivateService.cgroupOf(id)).orElse(0) / MIB;
            }
            for (Sandbox sandbox : sandboxes) sandbox.delete();
            sandboxes.clear();
            Reading after = read(progress, "after deleting them");

            var available = Cost.of(before, with, after, Reading::available, n, true);
            var kernel = Cost.of(before, with, after, Reading::kernel, n, false);
            var rss = Cost.of(before, with, after, Reading::rss, n, false);
            double pssMean = Arrays.stream(pss).average().orElse(0);
            String halves = " (mean of the drop on create and the rise on delete)";
            var figures = List.of(
                    Figure.of("idle_memory.total_per_sandbox", name(), "MiB",
                            "MemAvailable given up per idle tiny sandbox, " + n + " running" + halves, Stats.single(available.mean())),
                    Figure.of("idle_memory.total_on_create_per_sandbox", name(), "MiB",
                            "drop of MemAvailable on starting them, / " + n, Stats.single(available.onCreate())),
                    Figure.of("idle_memory.total_on_delete_per_sandbox", name(), "MiB",
                            "rise of MemAvailable on deleting them, / " + n, Stats.single(available.onDelete())),
                    Figure.of("idle_memory.processes_pss_per_sandbox", name(), "MiB",
                            "sum of the PSS of each sandbox's processes (" + processes + " processes in " + n
                                    + " sandboxes); stats across sandboxes", Stats.of(pss)),
                    Figure.of("idle_memory.overhead_per_sandbox", name(), "MiB",
                            "total per sandbox minus its processes' mean PSS: kernel objects, root metadata, service growth",
                            Stats.single(available.mean() - pssMean)).withTarget(Target.atMost(OVERHEAD_TARGET_MB)),
                    Figure.of("idle_memory.kernel_per_sandbox", name(), "MiB",
                            "growth of SUnreclaim + KernelStack + PageTables + Percpu (/proc/meminfo) / " + n + halves,
                            Stats.single(kernel.mean())),
                    Figure.of("idle_memory.service_rss_per_sandbox", name(), "MiB",
                            "RSS growth of this JVM (the service, plus the benchmark's client) / " + n + halves,
                            Stats.single(rss.mean())),
                    Figure.of("idle_memory.cgroup_charge_per_sandbox", name(), "MiB",
                            "memory.usage_in_bytes of each sandbox's memory cgroup (pages and kernel objects charged to it)",
                            Stats.of(cgroup)));
            Map<String, Object> details = new LinkedHashMap<>();
            details.put("sandboxes", n);
            details.put("processes", processes);
            details.put("memAvailablePerSandboxMiB", available.toMap());
            details.put("kernelPerSandboxMiB", kernel.toMap());
            details.put("jvmRssPerSandboxMiB", rss.toMap());
            details.put("meminfoGrowthWithSandboxesKiB", growth(before, with));
            details.put("readingsBefore", before.toMap());
            details.put("readingsWith", with.toMap());
            details.put("readingsAfterDelete", after.toMap());
            return new ScenarioResult(figures, details);
        } finally {
            for (Sandbox sandbox : sandboxes) sandbox.delete();
        }
    }

    /**
     * One quantity's cost per sandbox, in MiB, from the three readings.
     *
     * @param onCreate change from before to with the sandboxes
     * @param onDelete change back on deleting them
     */
    private record Cost(double onCreate, double onDelete) {
        /** {@code falling}: the quantity goes down as sandboxes take memory (MemAvailable). */
        static Cost of(Reading before, Reading with, Reading after, ToLongFunction<Reading> value, int n, boolean falling) {
            double sign = falling ? -1 : 1;
            double create = sign * (value.applyAsLong(with) - value.applyAsLong(before)) / MIB / n;
            double delete = sign * (value.applyAsLong(with) - value.applyAsLong(after)) / MIB / n;
            return new Cost(create, delete);
        }

        double mean() {
            return (onCreate + onDelete) / 2;
        }

        Map<String, Object> toMap() {
            return Map.of("onCreate", onCreate, "onDelete", onDelete, "mean", mean());
        }
    }

    /**
     * Medians of several readings taken after a pause; a median resists a passing spike elsewhere
     * on the machine.
     *
     * @param meminfo median of each /proc/meminfo field, bytes
     * @param rss     median RSS of this JVM, bytes
     * @param kernel  median of {@link HostMemory#kernel}, bytes
     */
    private record Reading(Map<String, Long> meminfo, long rss, long kernel, long[] availableSamples) {
        long available() {
            return meminfo.get("MemAvailable");
        }

        Map<String, Object> toMap() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("memAvailableMedianBytes", available());
            m.put("memAvailableBytes", availableSamples);
            m.put("jvmRssMedianBytes", rss);
            m.put("kernelMedianBytes", kernel);
            return m;
        }
    }

    private static Reading read(Progress progress, String label) throws InterruptedException {
        // A full GC first, so the JVM's garbage does not sit in the readings; then a deliberate
        // pause to let killed processes be reaped and deferred frees (RCU, slab) land.
        System.gc();
        Thread.sleep(SETTLE_MS);
        var samples = new ArrayList<Map<String, Long>>();
        long[] rss = new long[READINGS];
        for (int i = 0; i < READINGS; i++) {
            if (i > 0) Thread.sleep(READING_GAP_MS);
            samples.add(HostMemory.meminfo());
            rss[i] = HostMemory.ownRss();
        }
        var medians = new LinkedHashMap<String, Long>();
        for (String field : samples.getFirst().keySet())
            medians.put(field, median(samples.stream().mapToLong(s -> s.getOrDefault(field, 0L)).toArray()));
        long kernel = median(samples.stream().mapToLong(HostMemory::kernel).toArray());
        long[] available = samples.stream().mapToLong(s -> s.get("MemAvailable")).toArray();
        var reading = new Reading(medians, median(rss), kernel, available);
        progress.say("memory %s: MemAvailable %s MiB, unreclaimable kernel %s MiB, JVM RSS %s MiB", label,
                Format.number(reading.available() / MIB), Format.number(kernel / MIB), Format.number(reading.rss() / MIB));
        return reading;
    }

    /** Per-field growth from one reading to the next, KiB, for the fields that moved. */
    private static Map<String, Long> growth(Reading from, Reading to) {
        var out = new LinkedHashMap<String, Long>();
        from.meminfo().forEach((field, value) -> {
            long delta = (to.meminfo().getOrDefault(field, value) - value) / 1024;
            if (delta != 0) out.put(field, delta);
        });
        return out;
    }

    private static long median(long[] values) {
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[(sorted.length - 1) / 2];
    }
}
