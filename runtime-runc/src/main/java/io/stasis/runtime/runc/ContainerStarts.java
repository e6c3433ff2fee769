package io.stasis.runtime.runc;

import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.RuntimeSpec;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Sandboxes started fresh by runc from their bundle, and given a new root while they run. */
final class ContainerStarts {
    private static final Logger log = LoggerFactory.getLogger(ContainerStarts.class);

    private final Runc runc;
    private final Bundles bundles;
    private final VethPlug vethPlug;
    private final Reroot reroot;
    private final SandboxInit init;
    private final ServiceFiles serviceFiles;
    private final ContainerCleanup cleanup;

    ContainerStarts(Runc runc, Bundles bundles, VethPlug vethPlug, Reroot reroot, SandboxInit init, ServiceFiles serviceFiles,
                    ContainerCleanup cleanup) {
        this.runc = runc;
        this.bundles = bundles;
        this.vethPlug = vethPlug;
        this.reroot = reroot;
        this.init = init;
        this.serviceFiles = serviceFiles;
        this.cleanup = cleanup;
    }

    void create(RuntimeSpec spec) {
        SandboxId id = spec.id();
        long start = System.nanoTime();
        Path bundle = bundles.write(spec);
        try {
            Path pidFile = bundle.resolve("init.pid");
            runc.runDetached(id, bundle, pidFile);
            long initPid = SandboxInit.readPid(id, pidFile);
            spec.network().ifPresent(link -> vethPlug.plug(id, initPid, link));
            init.awaitAnswer(id, spec.root(), initPid, start);
            serviceFiles.writeBoot(id, spec.root());
        } catch (RuntimeException e) {
            cleanup.destroyAfter(id, e);
            throw e;
        }
        log.atDebug().addKeyValue("sandbox", id).addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("container started");
    }

    /**
     * Done by {@code stasis-reroot} (see src/main/c/stasis-reroot.c), which moves the sandbox's
     * mounts onto the new root and pivots its mount namespace there; stasis-init then binds its
     * socket in the new root, where this waits for it to answer. The new root gets a boot id of its
     * own, as a start would give it: processes recorded in it by the sandbox it was branched from
     * ended with that sandbox.
     */
    void reroot(SandboxId id, Path newRoot) {
        long start = System.nanoTime();
        long initPid = SandboxInit.readPid(id, bundles.pidFile(id));
        if (!HostProcesses.isAlive(initPid)) throw StasisException.runtimeFailed(id.value(), "reroot", "the sandbox's init is not running", null);
        serviceFiles.writeBoot(id, newRoot);
        reroot.run(id, initPid, newRoot);
        init.awaitAnswer(id, newRoot, initPid, start);
        bundles.moveRoot(id, newRoot);
        log.atDebug().addKeyValue("sandbox", id).addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("sandbox rerooted");
    }
}
