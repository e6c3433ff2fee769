package io.stasis.runtime.runc;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.RuntimeSpec;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sandboxes as runc containers: all namespaces including a user namespace, the cgroup limits of
 * the request, and stasis-init as process 1. runc runs detached, so sandboxes are not children
 * of the service; all the runtime knows about a sandbox is on disk under its state directory:
 * {@code runc/} (runc's own state), {@code bundles/<id>/config.json}, {@code logs/<id>/},
 * {@code images/<checkpoint>/} (CRIU images), {@code work/} (CRIU logs), {@code bin/}
 * (stasis-init and the other static helpers, see HelperBinary).
 * <p>This class wires the parts and hands each call to the one whose job it is: {@link ContainerStarts}
 * (create, reroot), {@link Bundles}, {@link InitProcesses} (processes through stasis-init),
 * {@link StandbyControl} (freeze, thaw, standby), {@link CriuDumps} and {@link CriuRestores},
 * {@link RuncImages}, {@link CgroupMeters}, {@link SandboxInit} (status) and {@link ContainerCleanup}
 * (stop, destroy, listOwned).
 */
public final class RuncRuntime implements InitRuntime, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RuncRuntime.class);

    private final OutputNotifier outputNotifier = new OutputNotifier();
    private final Optional<SamePageMerging> pageMerging;
    private final SandboxCgroups cgroups;
    private final Bundles bundles;
    private final SandboxInit init;
    private final ContainerStarts starts;
    private final InitProcesses processes;
    private final StandbyControl standby;
    private final CriuDumps dumps;
    private final CriuRestores restores;
    private final RuncImages images;
    private final CgroupMeters meters;
    private final ContainerCleanup cleanup;
    private final Reroot reroot;
    private final VethPlug vethPlug;

    public RuncRuntime(RuncConfig config) {
        Path logs = config.stateDir().resolve("logs");
        Path initDir = config.stateDir().resolve("bin");
        HelperBinary.install(initDir, HelperBinary.INIT);
        this.pageMerging = config.sharePages() && config.criu().isPresent() ? Optional.of(SamePageMerging.start()) : Optional.empty();
        Optional<CriuVersion> criuVersion = config.criu().flatMap(criu -> CriuVersion.of(criu, config.toolTimeout()));
        Runc runc;
        if (config.criu().isPresent()) {
            // runc runs CRIU through stasis-criu, which answers runc's version question itself, gives CRIU stasis-tar as its tar
            // and marks what CRIU restores for merging
            var criuEnvironment = new HashMap<String, String>();
            criuEnvironment.put("STASIS_CRIU_BINARY", config.criu().get().toString());
            criuEnvironment.put("STASIS_CRIU_PATH", HelperBinary.installTarForCriu(initDir).toString());
            criuVersion.ifPresent(v -> criuEnvironment.put("STASIS_CRIU_VERSION", v.wire()));
            if (pageMerging.isPresent()) criuEnvironment.put("STASIS_CRIU_MERGE", "1");
            runc = new Runc(config.runc(), config.stateDir().resolve("runc"), logs, config.toolTimeout(),
                    Optional.of(HelperBinary.install(initDir, HelperBinary.CRIU)), Map.copyOf(criuEnvironment));
        } else {
            runc = new Runc(config.runc(), config.stateDir().resolve("runc"), logs, config.toolTimeout(), Optional.empty());
        }
        var imageStore = new ImageStore(config.stateDir());
        this.reroot = Reroot.install(initDir, config.toolTimeout());
        this.vethPlug = VethPlug.install(initDir, config.toolTimeout());
        config.criu().ifPresent(criu -> CriuKerndat.prepare(criu, config.stateDir(), config.toolTimeout()));
        boolean nftablesLock = CriuConfigFile.nftablesLockSupported(config.criu(), config.toolTimeout());
        Path criuConfig = CriuConfigFile.install(config.stateDir(), nftablesLock);

        var freezer = new Freezer();
        var pager = new MemoryPager();
        var connections = new InitConnections();
        var serviceFiles = new ServiceFiles(config.rootOwner());
        this.cgroups = new SandboxCgroups(config.cgroupParent(), freezer);
        this.bundles = new Bundles(config.stateDir().resolve("bundles"), initDir, criuConfig, config.idMapBase(), cgroups);
        this.init = new SandboxInit(runc, bundles, cgroups, freezer, config.rootOwner(), startTimeout());
        this.processes = new InitProcesses(bundles, config.rootOwner(), connections, outputNotifier, InitProcesses.StdinPath.HOST_FIFO);
        this.standby = new StandbyControl(freezer, pager, cgroups, init, connections);
        this.cleanup = new ContainerCleanup(runc, bundles, logs, cgroups, freezer, init, standby, connections);
        this.starts = new ContainerStarts(runc, bundles, vethPlug, reroot, init, serviceFiles, cleanup);
        this.dumps = new CriuDumps(config.criu().isPresent(), runc, imageStore, cgroups, freezer, init, standby, connections);
        this.restores = new CriuRestores(runc, imageStore, bundles, init, serviceFiles, cleanup, vethPlug);
        this.images = new RuncImages(imageStore);
        this.meters = new CgroupMeters(pager, cgroups);
        log.atInfo().addKeyValue("runc", runc.version()).addKeyValue("criu", config.criu().map(Path::toString).orElse("none"))
                .addKeyValue("criuVersion", criuVersion.map(CriuVersion::wire).orElse("unknown"))
                .addKeyValue("networkLock", nftablesLock ? "nftables" : "iptables").addKeyValue("sharePages", pageMerging.isPresent())
                .addKeyValue("stateDir", config.stateDir()).log("runc runtime ready");
    }

    @Override
    public InitProcesses processesPart() {
        return processes;
    }

    @Override
    public RuncImages imagesPart() {
        return images;
    }

    @Override
    public CgroupMeters metersPart() {
        return meters;
    }

    @Override
    public void create(RuntimeSpec spec) {
        starts.create(spec);
    }

    @Override
    public boolean canReroot() {
        return true;
    }

    /**
     * {@inheritDoc}
     * <p>Done by {@code stasis-reroot}: see {@link ContainerStarts#reroot}.
     */
    @Override
    public void reroot(SandboxId id, Path newRoot) {
        starts.reroot(id, newRoot);
    }

    @Override
    public void updateResources(SandboxId id, Resources resources) {
        bundles.updateResources(id, resources);
    }

    @Override
    public void foreground(SandboxId id) {
        bundles.foreground(id);
    }

    @Override
    public void freeze(SandboxId id) {
        standby.freeze(id);
    }

    @Override
    public void thaw(SandboxId id) {
        standby.thaw(id);
    }

    @Override
    public void standby(SandboxId id) {
        standby.standby(id);
    }

    @Override
    public long checkpoint(SandboxId id, CheckpointId image, boolean leaveRunning) {
        return dumps.checkpoint(id, image, leaveRunning, () -> {
        });
    }

    @Override
    public long checkpoint(SandboxId id, CheckpointId image, Runnable atRest) {
        return dumps.checkpoint(id, image, true, atRest);
    }

    @Override
    public void restore(RuntimeSpec spec, CheckpointId image) {
        restores.restore(spec, image);
    }

    @Override
    public int awaitEarlierWork(Duration timeout) {
        return dumps.awaitEarlierWork(timeout);
    }

    @Override
    public OptionalLong completeInterruptedDump(SandboxId sandbox, CheckpointId image) {
        return dumps.completeInterruptedDump(image);
    }

    @Override
    public RuntimeStatus status(SandboxId id) {
        return init.status(id);
    }

    @Override
    public void stop(SandboxId id, Duration grace) {
        cleanup.stop(id, grace);
    }

    @Override
    public void destroy(SandboxId id) {
        cleanup.destroy(id);
    }

    @Override
    public Set<SandboxId> listOwned() {
        return cleanup.listOwned();
    }

    /** Removes the parent cgroups of the sandboxes where they are empty. */
    @Override
    public void close() {
        outputNotifier.close();
        reroot.close();
        vethPlug.close();
        pageMerging.ifPresent(SamePageMerging::close);
        cgroups.removeEmptyParents();
    }
}
