package io.stasis.runtime.runc;

import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.host.FileTrees;
import io.stasis.host.MountInfo;
import io.stasis.host.Mounts;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ends sandboxes and removes what the runtime holds for them, including what a runc killed half way
 * left behind (mounts, state, cgroups); and finds every sandbox it holds something for.
 */
final class ContainerCleanup {
    private static final Logger log = LoggerFactory.getLogger(ContainerCleanup.class);

    private final Runc runc;
    private final Bundles bundles;
    private final Path logs;
    private final SandboxCgroups cgroups;
    private final Freezer freezer;
    private final SandboxInit init;
    private final StandbyControl standby;
    private final InitConnections connections;

    ContainerCleanup(Runc runc, Bundles bundles, Path logs, SandboxCgroups cgroups, Freezer freezer, SandboxInit init,
                     StandbyControl standby, InitConnections connections) {
        this.runc = runc;
        this.bundles = bundles;
        this.logs = logs;
        this.cgroups = cgroups;
        this.freezer = freezer;
        this.init = init;
        this.standby = standby;
        this.connections = connections;
    }

    void stop(SandboxId id, Duration grace) {
        standby.stopPageOut(id);
        var pid = init.running(id);
        if (pid.isPresent()) {
            freezer.thaw(id, cgroups.path(id));
            // stasis-init passes SIGTERM to every process and ends when they have.
            ProcessHandle.of(pid.getAsLong()).ifPresent(ProcessHandle::destroy);
            HostProcesses.awaitEnd(pid.getAsLong(), grace);
        }
        destroy(id);
    }

    void destroy(SandboxId id) {
        standby.stopPageOut(id);
        if (runc.hasState(id)) {
            var pid = init.running(id);
            if (pid.isPresent()) {
                // A frozen task cannot die: thaw first. Killing process 1 ends the whole pid
                // namespace; waiting through /proc beats `runc delete --force`, which polls in 100 ms steps.
                freezer.thaw(id, cgroups.path(id));
                ProcessHandle.of(pid.getAsLong()).ifPresent(ProcessHandle::destroyForcibly);
                HostProcesses.awaitEnd(pid.getAsLong(), Duration.ofSeconds(5));
            }
            // Before any removal: runc delete removes its state directory recursively, and through a
            // criu-root a killed restore left mounted it deleted the sandbox's own files.
            runc.unmountLeftInState(id);
            // With its init gone, all runc delete would do is remove the cgroups and the state, as the
            // steps below do, at the cost of a runc process (~8 ms of CPU, ~22 ms here) per delete.
            if (pid.isPresent() && HostProcesses.isAlive(pid.getAsLong()) && runc.hasWholeState(id)) {
                try {
                    runc.deleteForce(id);
                } catch (StasisException e) {
                    // runc died on the way (killed): what it did not do, the steps below do.
                    log.atWarn().addKeyValue("sandbox", id).addKeyValue("reason", e.getMessage()).log("runc delete failed; removing what it left");
                }
            }
            runc.removeState(id);
        }
        unmountLeftInRoot(id);
        cgroups.remove(id);
        bundles.forgetRoot(id);
        connections.forget(id);
        deleteTree(bundles.dir().resolve(id.value()));
        deleteTree(logs.resolve(id.value()));
    }

    /** After a failed start or restore: nothing of the sandbox stays; what goes wrong here is told with {@code failure}. */
    void destroyAfter(SandboxId id, RuntimeException failure) {
        try {
            destroy(id);
        } catch (RuntimeException cleanup) {
            failure.addSuppressed(cleanup);
        }
    }

    /**
     * Mounts in the sandbox's root as the host sees it. There are none but while runc prepares a
     * restore: it binds the sandbox's mounts (resolv.conf, stasis-init, volumes) into the root on the
     * host for CRIU and takes them away at its end; a runc killed meanwhile left them, and the next
     * restore refused the root ("possibly malicious path").
     */
    void unmountLeftInRoot(SandboxId id) {
        Path root;
        try {
            root = bundles.rootOf(id);
        } catch (RuntimeException e) {
            return; // no bundle: never started, or cleaned up already
        }
        if (MountInfo.read().below(root).isEmpty()) return;
        try {
            var unmounted = Mounts.fromSystem().unmountAllBelow(root);
            log.atWarn().addKeyValue("sandbox", id).addKeyValue("unmounted", unmounted).log("mounts a runc that died left in the root removed");
        } catch (IOException e) {
            throw StasisException.runtimeFailed(id.value(), "unmount what runc left in the root", e.toString(), e);
        }
    }

    Set<SandboxId> listOwned() {
        return owned(runc.list(), bundles.dir(), logs);
    }

    /** The sandboxes an engine lists, and those with a bundle or logs left: what a runtime owns. */
    static Set<SandboxId> owned(List<String> listedByEngine, Path bundles, Path logs) {
        var ids = new TreeSet<SandboxId>();
        listedByEngine.stream().filter(SandboxId::isValid).map(SandboxId::new).forEach(ids::add);
        for (Path dir : new Path[]{bundles, logs}) {
            if (!Files.isDirectory(dir)) continue;
            try (Stream<Path> entries = Files.list(dir)) {
                entries.map(p -> p.getFileName().toString()).filter(SandboxId::isValid).map(SandboxId::new).forEach(ids::add);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return ids;
    }

    static void deleteTree(Path dir) {
        try {
            FileTrees.deleteRecursivelyUnmounting(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("removing " + dir, e);
        }
    }
}
