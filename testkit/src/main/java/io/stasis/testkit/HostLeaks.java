package io.stasis.testkit;

import io.stasis.core.sandbox.SandboxId;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * What a sandbox or a data directory can leave on the host: mounts (FUSE ones included), loop
 * devices, cgroups, processes (bucket mounts' daemons included), nftables tables and network interfaces. Tests assert these are gone after teardown; a leak is a bug.
 */
public final class HostLeaks {
    private HostLeaks() {
    }

    /** Mount points at or below {@code dir}. */
    public static List<String> mountsUnder(Path dir) {
        var out = new ArrayList<String>();
        String prefix = dir.toAbsolutePath().normalize().toString();
        for (String line : readLines(Path.of("/proc/self/mountinfo"))) {
            String mountPoint = line.split(" ")[4].replace("\\040", " ");
            if (mountPoint.equals(prefix) || mountPoint.startsWith(prefix + "/")) out.add(mountPoint);
        }
        return out;
    }

    /** Swap areas (from /proc/swaps) whose file lies under {@code dir}: a standby swap file left on. */
    public static List<String> swapFilesUnder(Path dir) {
        var out = new ArrayList<String>();
        try {
            var lines = Files.readAllLines(Path.of("/proc/swaps"));
            for (String line : lines.subList(Math.min(1, lines.size()), lines.size())) {
                String file = line.trim().split("\\s+")[0].replace("\\040", " ");
                if (Path.of(file).startsWith(dir.toAbsolutePath())) out.add(file);
            }
        } catch (IOException e) {
            // no /proc/swaps: no swap
        }
        return out;
    }

    /** Loop devices whose backing file is at or below {@code dir}. */
    public static List<String> loopDevicesBackedBy(Path dir) {
        var out = new ArrayList<String>();
        String prefix = dir.toAbsolutePath().normalize().toString();
        try (Stream<Path> loops = Files.list(Path.of("/sys/block"))) {
            for (Path loop : loops.filter(p -> p.getFileName().toString().startsWith("loop")).toList()) {
                Path backing = loop.resolve("loop/backing_file");
                if (!Files.exists(backing)) continue;
                String file = Files.readString(backing).strip();
                if (file.startsWith(prefix)) out.add(loop.getFileName() + " -> " + file);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    /**
     * Loop devices still backed by a file under {@code dir} after up to {@code settle}: a pool
     * unmounted lazily frees its device (autoclear) only when the last handle on it closes, which on a
     * loaded machine can take seconds. What is still there after that is a leak.
     */
    public static List<String> loopDevicesBackedBy(Path dir, Duration settle) {
        return afterSettling(() -> loopDevicesBackedBy(dir), settle);
    }

    /** What {@code find} still reports after up to {@code settle}, asked every 50 ms until it reports nothing. */
    private static List<String> afterSettling(Supplier<List<String>> find, Duration settle) {
        long deadline = System.nanoTime() + settle.toNanos();
        var left = find.get();
        while (!left.isEmpty() && System.nanoTime() < deadline) {
            LockSupport.parkNanos(50_000_000);
            left = find.get();
        }
        return left;
    }

    /** The nftables tables of family ip whose names start with {@code prefix}. */
    public static List<String> nftTables(String prefix) {
        try {
            var process = new ProcessBuilder("nft", "list", "tables", "ip").redirectErrorStream(true).start();
            String out = new String(process.getInputStream().readAllBytes());
            process.waitFor();
            return out.lines().map(String::strip).filter(l -> l.startsWith("table ip " + prefix))
                    .map(l -> l.substring("table ip ".length())).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * Links whose names start with {@code prefix} after up to {@code settle}: a sandbox's link goes
     * with its network namespace, which the kernel tears down asynchronously once its last process
     * has exited (seconds on a loaded machine). What is still there after that is a leak.
     */
    public static List<String> interfaces(String prefix, Duration settle) {
        return afterSettling(() -> interfaces(prefix), settle);
    }

    /** Network interfaces whose names start with {@code prefix}. */
    public static List<String> interfaces(String prefix) {
        try (Stream<Path> links = Files.list(Path.of("/sys/class/net"))) {
            return links.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(prefix)).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Live processes whose working directory is at or below {@code dir}: the FUSE daemons of bucket
     * mounts run in their mount's private directory under the data directory.
     */
    public static List<String> processesWorkingUnder(Path dir) {
        String prefix = dir.toAbsolutePath().normalize().toString();
        return ofLiveProcesses(proc -> {
            String cwd = Files.readSymbolicLink(proc.resolve("cwd")).toString(); // fails for a kernel thread: skipped
            return cwd.equals(prefix) || cwd.startsWith(prefix + "/") ? List.of(proc.getFileName() + " in " + cwd) : List.of();
        });
    }

    /** Cgroups, in any controller, named after one of these sandboxes. */
    public static List<String> cgroupsOf(Set<SandboxId> sandboxes) {
        var out = new ArrayList<String>();
        try (Stream<Path> controllers = Files.list(Path.of("/sys/fs/cgroup"))) {
            for (Path controller : controllers.toList()) {
                if (!Files.isDirectory(controller)) continue;
                // Not Files.walk: another service's cgroups may vanish mid-walk, which must not fail the check.
                Files.walkFileTree(controller, Set.of(), 3, new SimpleFileVisitor<>() {
                    @Override
                    public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
                        if (sandboxes.stream().anyMatch(id -> dir.getFileName().toString().equals(id.value()))) out.add(dir.toString());
                        return FileVisitResult.CONTINUE;
                    }

                    @Override
                    public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                        return attrs.isDirectory() ? preVisitDirectory(file, attrs) : FileVisitResult.CONTINUE;
                    }

                    @Override
                    public FileVisitResult visitFileFailed(Path file, IOException e) {
                        return FileVisitResult.CONTINUE;
                    }
                });
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    /**
     * gVisor control socket files of these sandboxes in the host-wide directories runsc makes them in
     * when its state root cannot hold them (/var/run, /run, /tmp), which no service's data dir holds.
     */
    public static List<String> runscSocketsOf(Set<SandboxId> sandboxes) {
        var out = new ArrayList<String>();
        for (Path dir : Stream.of("/var/run", "/run", "/tmp").map(Path::of).filter(Files::isDirectory).map(HostLeaks::real).distinct().toList())
            for (SandboxId id : sandboxes) {
                Path socket = dir.resolve("runsc-" + id.value() + ".sock");
                if (Files.exists(socket, LinkOption.NOFOLLOW_LINKS)) out.add(socket.toString());
            }
        return out;
    }

    /** The path with its links resolved (/var/run is /run on most hosts). */
    private static Path real(Path path) {
        try {
            return path.toRealPath();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Live (not zombie) processes whose cgroup path names one of these sandboxes. */
    public static List<String> processesOf(Set<SandboxId> sandboxes) {
        return ofLiveProcesses(proc -> {
            String cgroups = Files.readString(proc.resolve("cgroup"));
            return sandboxes.stream().filter(id -> cgroups.contains("/" + id.value())).map(id -> proc.getFileName() + " in " + id).toList();
        });
    }

    /**
     * Live processes of sandboxes (in a sandbox's memory cgroup, {@code /stasis/<id>}) whose cpu
     * cgroup is a host tools' one ({@code stasis-tools-*}): a sandbox's processes must run at the
     * sandbox's weight, not at the tools' lower one, whether runc started them or CRIU restored them.
     */
    public static List<String> sandboxProcessesInToolCgroups() {
        return ofLiveProcesses(proc -> {
            var lines = Files.readAllLines(proc.resolve("cgroup"));
            boolean ofASandbox = lines.stream().anyMatch(l -> l.matches("\\d+:memory:/stasis/.+"));
            boolean inToolsCgroup = lines.stream().anyMatch(l -> l.matches("\\d+:([^:]*,)?cpu(,[^:]*)?:.*/stasis-tools-[^/]*(/background)?"));
            // runc's and runsc's own stages join the sandbox's cgroups one controller after another: not yet done
            String comm = Files.readString(proc.resolve("comm")).strip();
            boolean misplaced = ofASandbox && inToolsCgroup && !comm.startsWith("runc") && !comm.equals("runsc") && !comm.equals("exe");
            return misplaced ? List.of(proc.getFileName() + " (" + comm + "): " + String.join(" ", lines)) : List.of();
        });
    }

    /** What a look at one process found: nothing, or lines for the report. */
    @FunctionalInterface
    private interface ProcessLook {
        List<String> at(Path proc) throws IOException;
    }

    /** {@code look} at every live (not zombie) process; one that ends meanwhile is skipped. */
    private static List<String> ofLiveProcesses(ProcessLook look) {
        var out = new ArrayList<String>();
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            for (Path proc : procs.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit)).toList()) {
                try {
                    if (!isZombie(proc)) out.addAll(look.at(proc));
                } catch (IOException e) {
                    // the process ended meanwhile
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    /**
     * A zombie has ended and holds nothing but its pid until its parent reaps it. A sandbox's init
     * is re-parented to the host's process 1, which may reap it only seconds later.
     */
    private static boolean isZombie(Path proc) throws IOException {
        String stat = Files.readString(proc.resolve("stat"));
        int close = stat.lastIndexOf(')');
        return close > 0 && close + 2 < stat.length() && stat.charAt(close + 2) == 'Z';
    }

    private static List<String> readLines(Path file) {
        try {
            return Files.readAllLines(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
