package io.stasis.host;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A swap file the service owns, where sandboxes in standby keep their memory. The only class that
 * runs {@code fallocate}, {@code mkswap}, {@code swapon} and {@code swapoff} (util-linux). A swap
 * device is host-wide: while it is on, the kernel may also swap other processes out to it under
 * memory pressure (docs/HOST.md says what an operator gives up); sandboxes themselves swap only when
 * the service pages them out, since their cgroups' memory+swap limit equals their memory limit.
 *
 * <p>It outlives the service as long as a sandbox has memory in it: {@link #close} turns it off and
 * deletes it only when asked to (no sandbox in standby left). A start finds it on and goes on using
 * it; after a host reboot it is off, and it is made again.
 */
public final class SwapFile {
    private static final Logger log = LoggerFactory.getLogger(SwapFile.class);
    private static final Path PROC_SWAPS = Path.of("/proc/swaps");
    /** Filesystems on which the kernel takes a swap file. */
    private static final List<String> SWAP_FILESYSTEMS = List.of("ext4", "ext3", "ext2", "xfs");
    /** Above the default priority of other swap areas (-2 and down), so paged-out sandboxes land here. */
    static final int PRIORITY = 100;

    private final Path file;
    private final long sizeBytes;
    private final Duration timeout;

    private SwapFile(Path file, long sizeBytes, Duration timeout) {
        this.file = file;
        this.sizeBytes = sizeBytes;
        this.timeout = timeout;
    }

    /**
     * The swap file at {@code file}, on: made ({@code fallocate}, mode 0600, {@code mkswap}) when it is
     * missing or of another size, turned on ({@code swapon}) unless it already is.
     * <p>On failure: {@code runtime_failed} naming the step, with the tool's stderr; a file made by
     * this call is removed again.
     */
    public static SwapFile open(Path file, long sizeBytes) {
        var swap = new SwapFile(file.toAbsolutePath(), sizeBytes, Duration.ofMinutes(2));
        swap.ensureOn();
        return swap;
    }

    public Path file() {
        return file;
    }

    public long sizeBytes() {
        return sizeBytes;
    }

    /** Bytes of it in use now (0 when it is off). */
    public long usedBytes() {
        return entry(file).map(e -> e.usedKib() * 1024).orElse(0L);
    }

    /** Whether the kernel has it on. */
    public boolean isOn() {
        return entry(file).isPresent();
    }

    /**
     * Turns it off and deletes it when {@code remove} (the kernel reads what it holds back into
     * memory first, so the caller asks only when nothing needs it); else leaves it on.
     */
    public void close(boolean remove) {
        if (!remove) return;
        if (isOn()) run("swapoff", List.of(ToolRunner.locate("swapoff").toString(), file.toString()));
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            throw failure("delete", e.getMessage(), null, e);
        }
        log.atInfo().addKeyValue("file", file).log("standby swap file off and removed");
    }

    private void ensureOn() {
        if (isOn()) {
            log.atInfo().addKeyValue("file", file).addKeyValue("usedBytes", usedBytes()).log("standby swap file already on");
            return;
        }
        String fs = filesystemOf(file.getParent());
        if (!SWAP_FILESYSTEMS.contains(fs))
            throw failure("check", "the data directory is on " + fs + ", where the kernel takes no swap file (" + String.join(", ", SWAP_FILESYSTEMS)
                    + " do; --standby-swap 0 turns standby off)", null, null);
        boolean made = false;
        try {
            if (!Files.isRegularFile(file) || Files.size(file) != sizeBytes) {
                Files.deleteIfExists(file);
                Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
                made = true;
                run("fallocate", List.of(ToolRunner.locate("fallocate").toString(), "--length", Long.toString(sizeBytes), file.toString()));
            }
            // mkswap every time it is turned on: after a reboot its pages are garbage anyway.
            run("mkswap", List.of(ToolRunner.locate("mkswap").toString(), file.toString()));
            run("swapon", List.of(ToolRunner.locate("swapon").toString(), "--priority", Integer.toString(PRIORITY), file.toString()));
        } catch (IOException | RuntimeException e) {
            if (made) {
                try {
                    Files.deleteIfExists(file);
                } catch (IOException cleanup) {
                    e.addSuppressed(cleanup);
                }
            }
            if (e instanceof StasisException s) throw s;
            throw failure("make", e.getMessage(), null, e);
        }
        log.atInfo().addKeyValue("file", file).addKeyValue("sizeBytes", sizeBytes).addKeyValue("priority", PRIORITY)
                .log("standby swap file on");
    }

    /** An active swap area of /proc/swaps: its file and the KiB in use. */
    record Entry(Path file, long usedKib) {
    }

    static Optional<Entry> entry(Path file) {
        try {
            var lines = Files.readAllLines(PROC_SWAPS);
            for (String line : lines.subList(1, lines.size())) {
                String[] f = line.trim().split("\\s+");
                if (f.length >= 4 && Path.of(MountInfo.unescape(f[0])).equals(file)) return Optional.of(new Entry(file, Long.parseLong(f[3])));
            }
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
        return Optional.empty();
    }

    /** Every swap area on the host, files and devices (for the tests' leak checks). */
    public static List<Path> active() {
        var out = new ArrayList<Path>();
        try {
            var lines = Files.readAllLines(PROC_SWAPS);
            for (String line : lines.subList(1, lines.size())) out.add(Path.of(MountInfo.unescape(line.trim().split("\\s+")[0])));
        } catch (IOException e) {
            // no /proc/swaps: no swap
        }
        return out;
    }

    private static String filesystemOf(Path dir) {
        try {
            return Files.getFileStore(dir).type();
        } catch (IOException e) {
            return "unknown";
        }
    }

    private void run(String step, List<String> argv) {
        ToolRunner.Result result;
        try {
            result = ToolRunner.run(argv, timeout);
        } catch (IOException e) {
            throw failure(step, "could not start " + argv.getFirst() + ": " + e.getMessage(), null, e);
        } catch (ToolRunner.TimedOut e) {
            throw failure(step, e.getMessage(), null, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw failure(step, "interrupted", null, e);
        }
        if (result.exitCode() != 0)
            throw failure(step, "exit " + result.exitCode() + ": " + result.stderrTail(), result.stderrTail(), null);
    }

    private StasisException failure(String step, String problem, String stderr, Throwable cause) {
        var details = new LinkedHashMap<String, Object>();
        details.put("step", step);
        details.put("file", file.toString());
        if (stderr != null) details.put("stderr", stderr);
        log.atWarn().addKeyValue("step", step).addKeyValue("file", file).log(problem);
        return new StasisException(ErrorCode.RUNTIME_FAILED, "standby swap file " + file + ": " + step + " failed: " + problem, details, cause);
    }
}
