package io.stasis.bench;

import io.stasis.host.MemInfo;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.stream.Stream;

/** Memory as the kernel reports it in /proc and the v1 memory cgroup; all sizes in bytes. */
final class HostMemory {
    private static final Path PROC = Path.of("/proc");
    private static final Path MEMORY_CGROUP = Path.of("/sys/fs/cgroup/memory");

    private HostMemory() {
    }

    /** Every field of /proc/meminfo, in bytes where the kernel gives kB. */
    static Map<String, Long> meminfo() {
        return MemInfo.read();
    }

    /**
     * Kernel memory that per-sandbox objects live in and that is not given back under pressure:
     * {@code SUnreclaim} (namespaces, mounts, cgroups, seccomp filters), {@code KernelStack},
     * {@code PageTables} and {@code Percpu} (cgroup statistics are per-cpu). Unlike MemAvailable,
     * it does not move with other processes' page cache.
     */
    static long kernel(Map<String, Long> meminfo) {
        return meminfo.getOrDefault("SUnreclaim", 0L) + meminfo.getOrDefault("KernelStack", 0L)
                + meminfo.getOrDefault("PageTables", 0L) + meminfo.getOrDefault("Percpu", 0L);
    }

    static long total() {
        return meminfoField(PROC.resolve("meminfo"), "MemTotal:");
    }

    /** Resident set of this JVM, which hosts the service (and the benchmark's client). */
    static long ownRss() {
        return meminfoField(PROC.resolve("self/status"), "VmRSS:");
    }

    /**
     * Live processes whose /proc/PID/cgroup names the sandbox (its cgroup in every controller is
     * {@code .../<sandbox id>}).
     */
    static List<Long> processesOf(String sandboxId) {
        var pids = new ArrayList<Long>();
        try (Stream<Path> entries = Files.list(PROC)) {
            for (Path proc : entries.filter(p -> isPid(p.getFileName().toString())).toList()) {
                try {
                    if (Files.readString(proc.resolve("cgroup")).contains("/" + sandboxId + "\n"))
                        pids.add(Long.parseLong(proc.getFileName().toString()));
                } catch (IOException e) {
                    // The process ended while we looked: it holds no memory any more.
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return pids;
    }

    /** Proportional set size of a process (shared pages divided among their users); empty if it ended. */
    static OptionalLong pss(long pid) {
        try {
            return OptionalLong.of(meminfoField(PROC.resolve(pid + "/smaps_rollup"), "Pss:"));
        } catch (UncheckedIOException e) {
            if (ended(pid, e)) return OptionalLong.empty();
            throw e;
        } catch (IllegalStateException e) {
            return OptionalLong.empty(); // a zombie has an empty smaps_rollup
        }
    }

    /**
     * Whether a read of the process's files failed because it ended meanwhile: the file gone, or
     * ESRCH on an open one (a plain IOException from the read of an exiting process's
     * smaps_rollup, whose directory is still there until it is reaped).
     */
    private static boolean ended(long pid, UncheckedIOException e) {
        return e.getCause() instanceof NoSuchFileException
                || String.valueOf(e.getCause().getMessage()).contains("No such process")
                || !Files.isDirectory(PROC.resolve(Long.toString(pid)));
    }

    /** Resident set of a process ({@code VmRSS}); empty if it ended (or is a zombie, which has none). */
    static OptionalLong rss(long pid) {
        try {
            return OptionalLong.of(meminfoField(PROC.resolve(pid + "/status"), "VmRSS:"));
        } catch (UncheckedIOException e) {
            if (ended(pid, e)) return OptionalLong.empty();
            throw e;
        } catch (IllegalStateException e) {
            return OptionalLong.empty();
        }
    }

    /** The summed resident sets of the live processes in a sandbox's (or floor container's) cgroup. */
    static long residentOf(String sandboxId) {
        return processesOf(sandboxId).stream().mapToLong(pid -> rss(pid).orElse(0)).sum();
    }

    /**
     * What the v1 memory cgroup of a sandbox is charged: its processes' pages, the page cache they
     * touched and, with kernel memory accounting, their kernel objects.
     */
    static OptionalLong cgroupUsage(String cgroupPath) {
        Path file = MEMORY_CGROUP.resolve(cgroupPath.replaceFirst("^/", "")).resolve("memory.usage_in_bytes");
        try {
            return OptionalLong.of(Long.parseLong(Files.readString(file).strip()));
        } catch (NoSuchFileException e) {
            return OptionalLong.empty();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Threads of this JVM as the kernel counts them (carriers and platform threads; virtual threads are not among them). */
    static long ownThreads() {
        return meminfoField(PROC.resolve("self/status"), "Threads:");
    }

    /** A {@code Name:   123 kB} line of a /proc file, in bytes. */
    private static long meminfoField(Path file, String field) {
        try {
            for (String line : Files.readAllLines(file)) {
                if (!line.startsWith(field)) continue;
                String[] parts = line.substring(field.length()).strip().split("\\s+");
                long value = Long.parseLong(parts[0]);
                return parts.length > 1 && parts[1].equals("kB") ? value * 1024 : value;
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        throw new IllegalStateException("no " + field + " in " + file);
    }

    private static boolean isPid(String name) {
        return !name.isEmpty() && name.chars().allMatch(Character::isDigit);
    }
}
