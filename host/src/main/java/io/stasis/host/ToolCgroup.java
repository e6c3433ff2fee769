package io.stasis.host;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A cpu cgroup below the service's own, at a fraction of its weight, for the host tools it starts
 * ({@code runc}, {@code nft}, {@code stasis-net}, {@code btrfs}, ...). Under load the tools of
 * creates and deletes fill every core; in this cgroup they take what the API's threads and the
 * sandboxes leave, so a GET or an exec does not wait behind another sandbox's {@code runc run}.
 * Nothing is slower when the host is idle: weights only divide contended time.
 * <p>
 * Only with cgroup v1's cpu controller, where a cgroup may hold tasks beside its children; under
 * cgroup v2 the service's cgroup would first have to become a leaf, so there it is not made
 * ({@link #open} answers empty). A tool is moved in right after its start: what it runs before
 * that (a few microseconds of its exec) runs at the service's weight, and everything it starts
 * later (runc's init stages until they join the sandbox's cgroup, CRIU) inherits the cgroup.
 * The sandboxes' own processes are not here: runc and CRIU put them in their sandbox's cgroup.
 * <p>
 * Tools started ahead of demand ({@link io.stasis.core.concurrent.AheadOfDemand}: a warm sandbox's
 * {@code runc run}, a fork spare's restore) go into its child {@value #BACKGROUND}, which weighs
 * {@value #BACKGROUND_SHARES} against each of the other tools' 1,024: forks of a files checkpoint
 * one after another, each taking a warm sandbox while the refill it caused ran beside the next,
 * took 44 ms at p50 where, a second apart, they took 28.
 */
public final class ToolCgroup implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ToolCgroup.class);
    private static final Path CPU_V1 = Path.of("/sys/fs/cgroup/cpu");
    /**
     * A nice-0 task weighs 1,024: the tools together weigh half of one of the service's busy
     * threads. At 256, lifecycles per second fell by 10-15% (runc, preempted more often, holds the
     * kernel's locks longer); at 512 they did not, and the crowd's GET p99 still fell by about half
     * (see docs/BENCHMARKS.md).
     */
    public static final int DEFAULT_SHARES = 512;
    /** Every instance's tools' cgroup is named this and then its own part. */
    static final String PREFIX = "stasis-tools-";
    /** The child for tools started ahead of demand. */
    static final String BACKGROUND = "background";
    /** A sixteenth of one busy tool: the refills take what the calls of the moment leave. */
    static final int BACKGROUND_SHARES = 64;

    private final Path dir;
    private final Path procs;
    private final Path backgroundProcs;
    private final int shares;
    private final AtomicBoolean broken = new AtomicBoolean();

    private ToolCgroup(Path dir, int shares) {
        this.dir = dir;
        this.procs = dir.resolve("cgroup.procs");
        this.backgroundProcs = dir.resolve(BACKGROUND).resolve("cgroup.procs");
        this.shares = shares;
    }

    private void make() throws IOException {
        Files.createDirectories(dir.resolve(BACKGROUND));
        Files.writeString(dir.resolve("cpu.shares"), Integer.toString(shares));
        Files.writeString(dir.resolve(BACKGROUND).resolve("cpu.shares"), Integer.toString(BACKGROUND_SHARES));
    }

    /**
     * Removes the tools' cgroups of instances killed before they could (a cgroup holding no task
     * is idle): each instance has its own, named after its process id, so these pile up
     * otherwise. One that belongs to a live instance and is idle just now is made again by it at
     * its next tool ({@link #enter}).
     */
    private static void removeIdleSiblings(Path parent) {
        try (var siblings = Files.list(parent)) {
            for (Path sibling : siblings.filter(p -> p.getFileName().toString().startsWith(PREFIX)).toList()) {
                try {
                    if (Files.readString(sibling.resolve("cgroup.procs")).isBlank()) remove(sibling);
                } catch (IOException e) {
                    // busy again, or removed meanwhile
                }
            }
        } catch (IOException e) {
            log.atDebug().addKeyValue("reason", e.toString()).log("could not list the tools' cgroups");
        }
    }

    /**
     * Makes (or takes over, after a killed run) the cgroup {@value #PREFIX}{@code instance} below
     * the service's cpu cgroup with {@code shares}; empty where the host has no cgroup v1 cpu controller.
     */
    public static Optional<ToolCgroup> open(String instance, int shares) {
        if (!Files.isRegularFile(CPU_V1.resolve("cpu.shares"))) {
            log.atInfo().log("no cgroup v1 cpu controller: host tools run at the service's CPU weight");
            return Optional.empty();
        }
        try {
            Path parent = CPU_V1.resolve(ownCpuCgroup().substring(1));
            removeIdleSiblings(parent);
            var cgroup = new ToolCgroup(parent.resolve(PREFIX + instance), shares);
            cgroup.make();
            log.atInfo().addKeyValue("cgroup", cgroup.dir).addKeyValue("shares", shares).log("host tools run in a cgroup of their own");
            return Optional.of(cgroup);
        } catch (IOException e) {
            log.atWarn().addKeyValue("reason", e.toString()).log("could not make the host tools' cgroup: they run at the service's CPU weight");
            return Optional.empty();
        }
    }

    /** The service's cgroup in the cpu hierarchy, from {@code /proc/self/cgroup} ({@code /} at the root). */
    private static String ownCpuCgroup() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/cgroup"))) {
            String[] fields = line.split(":", 3);
            if (fields.length == 3 && List.of(fields[1].split(",")).contains("cpu")) return fields[2];
        }
        throw new IOException("no cpu controller in /proc/self/cgroup");
    }

    /** Removes a tools' cgroup whose own tasks are gone: its background child first, if idle (else both stay). */
    private static void remove(Path cgroup) throws IOException {
        Path background = cgroup.resolve(BACKGROUND);
        if (Files.isDirectory(background) && Files.readString(background.resolve("cgroup.procs")).isBlank())
            Files.deleteIfExists(background);
        Files.deleteIfExists(cgroup);
    }

    /**
     * Moves the process {@code pid} (a tool just started) into this cgroup, or into its child for
     * tools started ahead of demand if {@code background}; one that has already ended is skipped.
     */
    public void enter(long pid, boolean background) {
        if (broken.get()) return;
        Path into = background ? backgroundProcs : procs;
        try {
            try {
                Files.writeString(into, Long.toString(pid));
            } catch (NoSuchFileException e) { // removed as idle by another instance's start
                make();
                Files.writeString(into, Long.toString(pid));
            }
        } catch (IOException e) {
            // ESRCH: the tool ended already (a `true`-fast one). Anything else would repeat for every tool.
            if (!String.valueOf(e.getMessage()).contains("No such process")) disable(e);
        }
    }

    private void disable(IOException e) {
        if (broken.compareAndSet(false, true))
            log.atWarn().addKeyValue("cgroup", dir).addKeyValue("reason", e.toString())
                    .log("could not move a host tool into its cgroup: tools run at the service's CPU weight from now on");
    }

    Path dir() {
        return dir;
    }

    /** Removes the cgroup, unless a tool still runs in it (then it stays, until a later start finds it idle). */
    @Override
    public void close() {
        try {
            remove(dir);
        } catch (IOException e) {
            log.atInfo().addKeyValue("cgroup", dir).addKeyValue("reason", e.toString()).log("host tools' cgroup left in place");
        }
    }
}
