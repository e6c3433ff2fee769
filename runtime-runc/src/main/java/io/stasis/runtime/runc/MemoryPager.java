package io.stasis.runtime.runc;

import io.stasis.core.sandbox.SandboxId;
import io.stasis.fs.linux.LinuxException;
import io.stasis.fs.linux.Syscalls;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves a frozen sandbox's memory out to swap and back. Out: {@code process_madvise(MADV_PAGEOUT)}
 * over every private writable mapping of each of its processes, which writes anonymous pages to
 * swap whatever the cgroup's swappiness, then the cgroup's own reclaim (v1 {@code
 * memory.force_empty}, v2 {@code memory.reclaim}), which frees the pages that the first step left
 * in the swap cache and the sandbox's page cache: measured, the first step alone left every page
 * charged and MemAvailable unchanged; both freed 305 of 308 MiB. In: the memory comes back page by
 * page as it is touched; the small mappings (where an interpreter's heap, stacks and libraries'
 * data live) are asked for at once ({@code MADV_WILLNEED}) when the sandbox is thawed, which took a
 * python REPL's first answer after a standby from 17 to 10 ms with 300 MiB paged out.
 *
 * <p>A gVisor sandbox's memory is the sentry's memory file, shared with its systrap stubs, which no
 * single process can advise out: the cgroup's reclaim does all of it. Pages touched just before the
 * freeze are still marked referenced, and the pages a reclaim does write out stay charged until the
 * write to swap completes: one reclaim gave up after a fifth of them (62 of 335 MiB, measured), one
 * three seconds later freed the rest in 212 ms. So the reclaim is repeated while it makes progress
 * or pages are still being written out, and a few times after a pause when it stalls.
 */
final class MemoryPager {
    private static final Logger log = LoggerFactory.getLogger(MemoryPager.class);
    private static final Path ROOT = Path.of("/sys/fs/cgroup");
    /** A page-out advises at most this much at once, so that a cancel waits for little. */
    static final long CHUNK = 16L << 20;
    /** A reclaim that frees less than this stalled. */
    static final long RECLAIM_PROGRESS = 1L << 20;
    /** What may stay charged: below this, no more reclaims. */
    private static final long RECLAIM_ENOUGH = 8L << 20;
    private static final int RECLAIM_STALLS = 3;
    private static final Duration RECLAIM_PAUSE = Duration.ofMillis(300);
    /** How long the reclaims may wait for pages being written to swap, at most. */
    private static final Duration RECLAIM_WAIT = Duration.ofSeconds(30);
    /** Mappings up to this size are read back in at once on a thaw. */
    static final long PREFETCH_BELOW = 64L << 20;

    private final boolean unified = Files.exists(ROOT.resolve("cgroup.controllers"));

    /** One private writable mapping of a process: [start, end). */
    record Range(long start, long end) {
        long length() {
            return end - start;
        }
    }

    /**
     * Pages out every process of the frozen cgroup, then reclaims the cgroup. Stops between chunks
     * once {@code cancelled} says so. Returns the bytes the cgroup's charge went down by.
     */
    long pageOut(SandboxId id, String cgroupPath, BooleanSupplier cancelled) {
        long before = charged(cgroupPath);
        for (long pid : pids(cgroupPath)) {
            if (cancelled.getAsBoolean()) return before - charged(cgroupPath);
            advise(pid, ranges(pid, Long.MAX_VALUE), Syscalls.MADV_PAGEOUT, cancelled);
        }
        int stalls = 0;
        long deadline = System.nanoTime() + RECLAIM_WAIT.toNanos();
        do { // once at least: it frees what the page-out left in the swap cache
            long charge = charged(cgroupPath);
            reclaim(id, cgroupPath);
            if (charge - charged(cgroupPath) >= RECLAIM_PROGRESS) continue;
            if (stat(cgroupPath, "writeback") == 0) stalls++; // else its writes to swap are not done: wait for them
            LockSupport.parkNanos(RECLAIM_PAUSE.toNanos());
        } while (!cancelled.getAsBoolean() && charged(cgroupPath) > RECLAIM_ENOUGH && stalls < RECLAIM_STALLS && System.nanoTime() < deadline);
        return before - charged(cgroupPath);
    }

    /** Asks for the small mappings of every process of the cgroup to be read back in, if it has any swapped out. */
    void prefetch(String cgroupPath) {
        if (swapped(cgroupPath) == 0) return;
        for (long pid : pids(cgroupPath)) advise(pid, ranges(pid, PREFETCH_BELOW), Syscalls.MADV_WILLNEED, () -> false);
    }

    /** Bytes of the cgroup's memory in swap. */
    long swapped(String cgroupPath) {
        if (unified) return readLong(SandboxCgroups.dir("", cgroupPath).resolve("memory.swap.current"));
        return stat(cgroupPath, "swap");
    }

    /** A line of the cgroup's {@code memory.stat} (v2's name for writeback is {@code file_writeback}); 0 if it has none. */
    private long stat(String cgroupPath, String key) {
        return field(cgroupPath, "memory.stat", unified && key.equals("writeback") ? "file_writeback" : key);
    }

    /** Processes of the cgroup the kernel's OOM killer ended (v1 {@code memory.oom_control}, v2 {@code memory.events}); 0 if gone. */
    long oomKills(String cgroupPath) {
        return field(cgroupPath, unified ? "memory.events" : "memory.oom_control", "oom_kill");
    }

    /** The value of the line {@code name N} of one of the cgroup's memory files; 0 if it has none or the cgroup is gone. */
    private long field(String cgroupPath, String file, String name) {
        try {
            for (String line : Files.readAllLines(SandboxCgroups.dir(unified ? "" : "memory", cgroupPath).resolve(file)))
                if (line.startsWith(name + " ")) return Long.parseLong(line.substring(name.length() + 1).strip());
        } catch (IOException | NumberFormatException e) {
            return 0;
        }
        return 0;
    }

    /** Bytes of memory charged to the cgroup (not counting swap). */
    long charged(String cgroupPath) {
        return unified ? readLong(SandboxCgroups.dir("", cgroupPath).resolve("memory.current"))
                : readLong(SandboxCgroups.dir("memory", cgroupPath).resolve("memory.usage_in_bytes"));
    }

    private void reclaim(SandboxId id, String cgroupPath) {
        try {
            if (unified) Files.writeString(SandboxCgroups.dir("", cgroupPath).resolve("memory.reclaim"), Long.toString(Math.max(charged(cgroupPath), 1)));
            else Files.writeString(SandboxCgroups.dir("memory", cgroupPath).resolve("memory.force_empty"), "0");
        } catch (IOException e) {
            // What it could not reclaim stays resident: standby still holds (frozen), with more RAM.
            log.atWarn().addKeyValue("sandbox", id).addKeyValue("reason", e.getMessage()).log("cgroup reclaim after page-out failed");
        }
    }

    private static void advise(long pid, List<Range> ranges, int advice, BooleanSupplier cancelled) {
        if (ranges.isEmpty()) return;
        int pidfd;
        try {
            pidfd = Syscalls.pidfdOpen(pid);
        } catch (LinuxException gone) {
            return; // the process ended meanwhile
        }
        try {
            var batch = new long[2 * Syscalls.MAX_IOV];
            int n = 0;
            long inBatch = 0;
            for (Range r : ranges) {
                for (long at = r.start(); at < r.end(); at += CHUNK) {
                    long len = Math.min(CHUNK, r.end() - at);
                    batch[2 * n] = at;
                    batch[2 * n + 1] = len;
                    n++;
                    inBatch += len;
                    if (n == Syscalls.MAX_IOV || inBatch >= CHUNK) {
                        if (cancelled.getAsBoolean()) return;
                        call(pidfd, batch, n, advice);
                        n = 0;
                        inBatch = 0;
                    }
                }
            }
            if (n > 0 && !cancelled.getAsBoolean()) call(pidfd, batch, n, advice);
        } finally {
            Syscalls.close(pidfd);
        }
    }

    private static void call(int pidfd, long[] batch, int n, int advice) {
        try {
            Syscalls.processMadvise(pidfd, Arrays.copyOf(batch, 2 * n), advice);
        } catch (LinuxException e) {
            // A mapping unmapped meanwhile (ENOMEM), a process gone (ESRCH): the rest still counts.
            log.atDebug().addKeyValue("errno", e.getMessage()).log("process_madvise");
        }
    }

    /** The process's private writable mappings smaller than {@code below}, without the kernel's own ([vvar], [vdso]). */
    static List<Range> ranges(long pid, long below) {
        var out = new ArrayList<Range>();
        List<String> lines;
        try {
            lines = Files.readAllLines(Path.of("/proc/" + pid + "/maps"));
        } catch (IOException e) {
            return out;
        }
        for (String line : lines) {
            Range r = parse(line);
            if (r != null && r.length() < below) out.add(r);
        }
        return out;
    }

    /** One line of /proc/PID/maps, or null if it is not a private writable mapping of the process's own. */
    static Range parse(String line) {
        String[] f = line.trim().split("\\s+", 6);
        if (f.length < 5) return null;
        String perms = f[1];
        if (perms.length() < 4 || perms.charAt(1) != 'w' || perms.charAt(3) != 'p') return null;
        String name = f.length == 6 ? f[5] : "";
        if (name.startsWith("[v")) return null; // [vvar], [vvar_vclock], [vdso], [vsyscall]
        int dash = f[0].indexOf('-');
        if (dash < 0) return null;
        try {
            return new Range(Long.parseUnsignedLong(f[0].substring(0, dash), 16), Long.parseUnsignedLong(f[0].substring(dash + 1), 16));
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private List<Long> pids(String cgroupPath) {
        var out = new ArrayList<Long>();
        try {
            for (String line : Files.readAllLines(SandboxCgroups.dir(unified ? "" : "memory", cgroupPath).resolve("cgroup.procs")))
                if (!line.isBlank()) out.add(Long.parseLong(line.strip()));
        } catch (IOException | NumberFormatException e) {
            return out;
        }
        return out;
    }

    private static long readLong(Path file) {
        try {
            return Long.parseLong(Files.readString(file).strip());
        } catch (IOException | NumberFormatException e) {
            return 0;
        }
    }
}
