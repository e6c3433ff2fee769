package io.stasis.runtime.runc;

import io.stasis.core.sandbox.SandboxId;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Where each sandbox's cgroups are ({@code <parent>/<sandbox id>} in every controller), and their removal. */
final class SandboxCgroups {
    private static final Logger log = LoggerFactory.getLogger(SandboxCgroups.class);
    private static final String CGROUP_FS = "/sys/fs/cgroup";

    private final String parent;
    private final Freezer freezer;

    SandboxCgroups(String parent, Freezer freezer) {
        this.parent = parent;
        this.freezer = freezer;
    }

    String path(SandboxId id) {
        return "/" + parent + "/" + id.value();
    }

    /**
     * The directory of {@code cgroupPath} (as {@link #path} gives it) in {@code controller}'s v1
     * hierarchy, or in the unified (v2) one for an empty {@code controller}.
     */
    static Path dir(String controller, String cgroupPath) {
        Path root = Path.of(CGROUP_FS);
        String relative = cgroupPath.startsWith("/") ? cgroupPath.substring(1) : cgroupPath;
        return controller.isEmpty() ? root.resolve(relative) : root.resolve(controller).resolve(relative);
    }

    /**
     * Removes the sandbox's cgroups in every controller, as runc delete would, and also those runc's
     * state no longer names: a runc killed in the middle of a restore left them (empty, or with tasks
     * CRIU had begun to restore), and runc delete then knows nothing of them. Whatever is in them is
     * killed, then they are removed, cgroups below them first.
     */
    void remove(SandboxId id) {
        var left = new LinkedHashSet<Path>(); // a controller mounted under two names (cpu, cpu,cpuacct) is one directory
        try (Stream<Path> controllers = Files.list(Path.of(CGROUP_FS))) {
            for (Path controller : controllers.toList()) {
                Path cgroup = controller.resolve(parent).resolve(id.value());
                try {
                    if (Files.isDirectory(cgroup)) left.add(cgroup.toRealPath());
                } catch (IOException e) {
                    // removed meanwhile
                }
            }
        } catch (IOException e) {
            log.atWarn().addKeyValue("sandbox", id).setCause(e).log("could not list cgroup controllers");
            return;
        }
        if (left.isEmpty()) return;
        try {
            freezer.thaw(id, path(id)); // a frozen task takes its SIGKILL only once thawed
        } catch (RuntimeException e) {
            // no freezer cgroup left: nothing is frozen
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        for (Path cgroup : left) {
            while (true) {
                try {
                    deleteTree(cgroup);
                    break;
                } catch (NoSuchFileException e) {
                    break;
                } catch (IOException e) {
                    // Busy: tasks are in it. SIGKILL them; the kernel lets the directory go once they are gone.
                    try (Stream<String> pids = Files.lines(cgroup.resolve("cgroup.procs"))) {
                        pids.map(Long::parseLong).map(ProcessHandle::of).flatMap(Optional::stream).forEach(ProcessHandle::destroyForcibly);
                    } catch (IOException | RuntimeException ignored) {
                        // removed meanwhile
                    }
                    if (System.nanoTime() > deadline) {
                        log.atWarn().addKeyValue("sandbox", id).addKeyValue("cgroup", cgroup).log("a cgroup of the sandbox could not be removed");
                        break;
                    }
                    LockSupport.parkNanos(5_000_000);
                }
            }
        }
        log.atDebug().addKeyValue("sandbox", id).addKeyValue("cgroups", left.size()).log("cgroups removed");
    }

    /** A cgroup and those below it (rmdir: a cgroup's files go with it; one with tasks or children is busy). */
    private static void deleteTree(Path cgroup) throws IOException {
        List<Path> children;
        try (Stream<Path> entries = Files.list(cgroup)) {
            children = entries.filter(p -> Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)).toList();
        }
        for (Path child : children) deleteTree(child);
        Files.delete(cgroup);
    }

    /** Removes the parent cgroups of the sandboxes where they are empty. */
    void removeEmptyParents() {
        try (Stream<Path> controllers = Files.list(Path.of(CGROUP_FS))) {
            controllers.map(c -> c.resolve(parent)).filter(Files::isDirectory).forEach(parentDir -> {
                try {
                    Files.delete(parentDir);
                } catch (IOException e) {
                    log.atDebug().addKeyValue("cgroup", parentDir).log("cgroup parent still in use");
                }
            });
        } catch (IOException e) {
            log.atWarn().setCause(e).log("could not list cgroup controllers");
        }
    }
}
