package io.stasis.runtime.runc;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.FileOwner;
import io.stasis.core.spi.RuntimeSpec;
import io.stasis.fs.linux.ConfinedRoot;
import io.stasis.fs.linux.Errno;
import io.stasis.fs.linux.LinuxException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sandboxes under gVisor: a user-space kernel (the sentry, on the systrap platform) between the
 * sandbox's processes and the host, so that they reach the host kernel only through the sentry's
 * own few system calls. Everything above the engine is shared with {@link RuncRuntime}: the OCI
 * bundle, stasis-init as process 1 and its wire protocol (its socket and its processes' files are
 * in the root, which under the flags of {@link Runsc} is the host directory itself), the cgroup
 * meters. What differs is here and in {@link Runsc}:
 * <ul>
 *   <li>pause is the cgroup freezer alone, as under runc: the sentry and its stubs stop where they
 *   are and use no CPU. Not {@code runsc pause}: a sentry paused by it still used ~6% of a core, and
 *   its resume ends the system calls its tasks were waiting in with EINTR (a shell's open of a FIFO
 *   failed), where the freezer's thaw lets them wait on. runsc's own calls hang on a frozen
 *   sandbox, so every call thaws the cgroup first, and the status is read from runsc's state file,
 *   /proc and the freezer. Standby is that pause, then the cgroup's reclaim pages the sentry's
 *   memory (its memory file, shared with the systrap stubs, so no single process can advise it
 *   out) to swap in the background;</li>
 *   <li>the pids limit counts host tasks (the sentry's threads, the gofer and a systrap stub per
 *   address space: about 21 plus 2.5 per process inside), and reaching it ends the whole sandbox,
 *   so the host limit is scaled from the one asked for ({@link #hostLimits});</li>
 *   <li>a checkpoint has stasis-init let go of its socket first (runsc refuses to save a unix
 *   socket bound on the host), and bind it again after;</li>
 *   <li>the network: the sentry runs its own network stack on the interfaces of the namespace it
 *   starts in, so the namespace is made and plugged into the sandbox's link before each start and
 *   restore (runsc takes the kernel's address off eth0 as it starts, so a namespace serves one
 *   start); the same host end, address and host-side enforcement as under runc. Connections open
 *   at a checkpoint are dropped.</li>
 * </ul>
 */
public final class RunscRuntime implements InitRuntime, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RunscRuntime.class);
    private static final Duration START_TIMEOUT = Duration.ofSeconds(30);
    /** What a quiesced stasis-init looks for to bind its socket again (see stasis-init.c, quiesce). */
    private static final String REBIND_FILE = "/.stasis/rebind";
    /** How long an init has to answer after the rebind file before it is signalled instead (it looks every 2 ms). */
    private static final Duration REBIND_BY_FILE_WAIT = Duration.ofMillis(500);
    /** Host tasks of an idle sandbox: the sentry's threads, the gofer, the first stub. */
    private static final int BASE_HOST_TASKS = 32;
    private static final int HOST_TASKS_PER_PROCESS = 3;
    /** The image's work directory of a save: its {@link SaveRecord}. */
    private static final String SAVE_STEP = "save";

    private final OutputNotifier outputNotifier = new OutputNotifier();
    private final Runsc runsc;
    private final Path logs;
    private final SandboxCgroups cgroups;
    private final Bundles bundles;
    private final InitConnections connections = new InitConnections();
    private final InitProcesses processes;
    private final ImageStore imageStore;
    private final RuncImages images;
    private final CgroupMeters meters;
    private final FileOwner rootOwner;
    private final VethPlug vethPlug;
    private final Freezer freezer = new Freezer();
    private final PageOuts pageOuts;
    private final ServiceFiles serviceFiles;
    /** The last CPU time each sandbox's processes were seen to have used: see {@link #cpuUsage}. */
    private final Map<SandboxId, Duration> lastKernelCpu = new ConcurrentHashMap<>();
    /** Sandboxes started in the background that wait frozen for an owner (see {@link #create}). */
    private final Set<SandboxId> waitingFrozen = ConcurrentHashMap.newKeySet();
    /** Sandboxes saved and ended whose runsc state is still being removed: see {@link #tearDownAfterSave}. */
    private final Map<SandboxId, CompletableFuture<Void>> teardowns = new ConcurrentHashMap<>();

    public RunscRuntime(RunscConfig config) {
        this.logs = config.stateDir().resolve("logs");
        Path initDir = config.stateDir().resolve("bin");
        HelperBinary.install(initDir, HelperBinary.INIT);
        this.runsc = new Runsc(config.runsc(), config.stateDir().resolve("runsc"), logs, config.toolTimeout(),
                HelperBinary.install(initDir, HelperBinary.REAPER), HelperBinary.install(initDir, HelperBinary.SENTRY));
        this.rootOwner = config.rootOwner();
        this.vethPlug = VethPlug.install(initDir, config.toolTimeout());
        this.serviceFiles = new ServiceFiles(rootOwner);
        this.cgroups = new SandboxCgroups(config.cgroupParent(), freezer);
        this.bundles = new Bundles(config.stateDir().resolve("bundles"), initDir, config.stateDir().resolve("no-criu.conf"),
                config.idMapBase(), cgroups, RunscRuntime::forRunsc);
        this.processes = new InitProcesses(bundles, rootOwner, connections, outputNotifier, InitProcesses.StdinPath.INIT_SOCKET);
        this.imageStore = new ImageStore(config.imageStateDir());
        this.images = new RuncImages(imageStore);
        var pager = new MemoryPager();
        this.meters = new CgroupMeters(pager, cgroups);
        this.pageOuts = new PageOuts(pager);
        log.atInfo().addKeyValue("runsc", runsc.version()).addKeyValue("flags", Runsc.SANDBOX_FLAGS)
                .addKeyValue("stateDir", config.stateDir()).log("gVisor runtime ready");
    }

    /**
     * The host limits for a sandbox that asks for {@code resources}: the same CPU and memory (a
     * sandbox past its memory is ended whole by the host, not one process in it), and a pids limit
     * on host tasks that lets the sandbox run the processes it asked for.
     */
    static Resources hostLimits(Resources resources) {
        long pids = BASE_HOST_TASKS + (long) HOST_TASKS_PER_PROCESS * resources.pids();
        return new Resources(resources.cpus(), resources.memoryMb(), (int) Math.min(pids, Integer.MAX_VALUE), resources.diskMb());
    }

    /**
     * What runsc needs changed in runc's spec: the sentry applies no seccomp profile of ours and runs
     * no CRIU; stasis-init may set the hostname of a copy restored from another sandbox's image
     * (CAP_SYS_ADMIN, in gVisor's kernel only: init drops it from every process it starts); and the
     * root's own /tmp is bound on /tmp, since runsc otherwise mounts a tmpfs of the sentry's there,
     * which the host (the files API) would never see. Only a real directory is bound: the sandbox may
     * have made its /tmp a link, which the host would follow out of the root. A bundle is written
     * right before each start and restore, when no process of the sandbox runs to change it after
     * this check.
     */
    private static ObjectNode forRunsc(ObjectNode spec) {
        ((ObjectNode) spec.get("linux")).remove("seccomp");
        spec.remove("annotations");
        var capabilities = (ObjectNode) spec.path("process").path("capabilities");
        for (String set : List.of("bounding", "effective", "permitted")) ((ArrayNode) capabilities.get(set)).add("CAP_SYS_ADMIN");
        Path tmp = Path.of(spec.path("root").path("path").asText()).resolve("tmp");
        var mounts = (ArrayNode) spec.get("mounts");
        boolean bound = false;
        for (var mount : mounts) bound |= mount.path("destination").asText().equals("/tmp");
        if (!bound && Files.isDirectory(tmp, LinkOption.NOFOLLOW_LINKS)) {
            var mount = JsonNodeFactory.instance.objectNode().put("destination", "/tmp").put("type", "bind").put("source", tmp.toString());
            mount.putArray("options").add("rbind").add("rw").add("nosuid").add("nodev");
            // Before the volumes, which may be mounted below /tmp.
            int firstBind = 0;
            while (firstBind < mounts.size() && !mounts.get(firstBind).path("type").asText().equals("bind")) firstBind++;
            mounts.insert(firstBind, mount);
        }
        return spec;
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
        SandboxId id = spec.id();
        long start = System.nanoTime();
        Path bundle = writeBundle(spec);
        try {
            Path pidFile = bundles.pidFile(id);
            withNetwork(spec, launcher -> runsc.runDetached(id, bundle, pidFile, launcher));
            bundles.applyDeferredLimits(id);
            SandboxInit.awaitAnswer(id, spec.root(), rootOwner, SandboxInit.readPid(id, pidFile), start, START_TIMEOUT);
            serviceFiles.writeBoot(id, spec.root());
            // An idle sentry is not idle (its timers, the systrap stubs: ~4% of a core each, and 4
            // warm sandboxes cost a young sandbox's checkpoint and fork 10-15% on 2 cores): one
            // started ahead of demand waits frozen, and its owner's foreground thaws it (~ms).
            if (spec.background()) {
                waitingFrozen.add(id);
                pause(id);
            }
        } catch (RuntimeException e) {
            destroyAfter(id, e);
            throw e;
        }
        log.atDebug().addKeyValue("sandbox", id).addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("gVisor sandbox started");
    }

    /**
     * The CPU time of the sandbox's processes as gVisor's kernel counts it, not the host cgroup's:
     * that also counts the sentry's own work (its timers, the systrap stubs), ~5% of a core while
     * the sandbox is idle, which would keep an idle sandbox busy to the idle ladder. A frozen sentry
     * cannot answer: its processes have used what they had when it froze. An init that cannot tell
     * (started by an earlier version) leaves the host's figure.
     */
    @Override
    public Duration cpuUsage(SandboxId id) {
        if (status(id) == RuntimeStatus.RUNNING) {
            try {
                var used = processes.kernelCpu(id);
                if (used.isPresent()) {
                    lastKernelCpu.put(id, used.get());
                    return used.get();
                }
            } catch (StasisException e) {
                log.atDebug().addKeyValue("sandbox", id).addKeyValue("reason", e.getMessage()).log("init could not tell its CPU time");
            }
        }
        var last = lastKernelCpu.get(id);
        return last != null ? last : meters.cpuUsage(id);
    }

    @Override
    public void updateResources(SandboxId id, Resources resources) {
        bundles.updateResources(id, hostLimits(resources));
    }

    @Override
    public void foreground(SandboxId id) {
        bundles.foreground(id);
        if (waitingFrozen.contains(id)) {
            resume(id);
            waitingFrozen.remove(id);
        }
    }

    @Override
    public void freeze(SandboxId id) {
        if (status(id) == RuntimeStatus.RUNNING) pause(id);
    }

    private void pause(SandboxId id) {
        freezer.freeze(id, cgroups.path(id));
    }

    @Override
    public void thaw(SandboxId id) {
        if (status(id) != RuntimeStatus.FROZEN) return;
        resume(id);
    }

    /**
     * A paused sandbox running again: its page-out stopped, its cgroup thawed, and its tasks resumed
     * if a checkpoint held them (after the thaw: the sentry must run to hear it), by this version
     * ({@link Runsc#hold}'s marker) or an earlier one ({@code runsc pause}: runsc's state says
     * paused). Every path that runs a frozen sandbox again comes here.
     */
    private void resume(SandboxId id) {
        pageOuts.stop(id);
        freezer.thaw(id, cgroups.path(id));
        Path held = heldMarker(id);
        if (Files.exists(held)) release(id, held);
        if (runsc.state(id).filter(state -> state.status().equals("paused")).isPresent()) runsc.resume(id);
    }

    /**
     * {@link Runsc#release}, such that a helper that fails (killed, say) does not leave the tasks
     * held, or its caller short of the rebind that follows: once the sentry had the call (the marker
     * is gone) the release counts as done, as the sentry runs the tasks anyway; before it, the
     * release is asked once more.
     */
    private void release(SandboxId id, Path held) {
        for (int attempt = 1; ; attempt++) {
            try {
                runsc.release(id, held);
                return;
            } catch (StasisException e) {
                boolean sentryHasIt = !Files.exists(held);
                if (!sentryHasIt && attempt == 2) throw e;
                log.atWarn().addKeyValue("sandbox", id).addKeyValue("reason", e.getMessage())
                        .log(sentryHasIt ? "releasing the tasks failed after the sentry had the call: they run"
                                : "releasing the tasks failed before the sentry had the call: asking once more");
                if (sentryHasIt) return;
            }
        }
    }

    /** Where {@link Runsc#hold} marks the sandbox's tasks held: in its bundle, which goes with it. */
    private Path heldMarker(SandboxId id) {
        return bundles.dir().resolve(id.value()).resolve("tasks-held");
    }

    /** A pause, then the sentry's memory paged out to swap in the background, until a thaw stops it. */
    @Override
    public void standby(SandboxId id) {
        freeze(id);
        pageOuts.start(id, cgroups.path(id));
    }

    /**
     * runsc saves the sandbox whole, but refuses a unix socket bound on the host: stasis-init lets go
     * of its socket first ({@code quiesce}) and binds it again on SIGUSR1 afterwards, in this sandbox
     * if it runs on, or in the one restored from the image.
     *
     * <p>The save is the sentry's: a runsc that fails or is killed once it has asked for it leaves
     * the sentry saving, and a save that ends well is the checkpoint asked for (a save that does not
     * leave the sandbox running ends it then, so the image is all that holds its processes). Such a
     * save counts as done; the sentry's log says how it ended, also to the reconciler after a crash
     * ({@link #completeInterruptedDump}).
     */
    @Override
    public long checkpoint(SandboxId id, CheckpointId image, boolean leaveRunning) {
        return checkpoint(id, image, leaveRunning, Optional.empty());
    }

    /**
     * A checkpoint that leaves the sandbox running, with its tasks held between the quiesce and its
     * files' snapshot: runsc stops them ({@link Runsc#pause}), the save keeps them stopped (its own
     * pause nests in ours), and {@code atRest} runs after it, when the sentry has written back the
     * file data it cached. Run on from the quiesce instead, the processes went past the files'
     * snapshot, and a copy restored from the image failed with ENOENT on a file they had opened
     * since (and lost what they had written since).
     */
    @Override
    public long checkpoint(SandboxId id, CheckpointId image, Runnable atRest) {
        return checkpoint(id, image, true, Optional.of(atRest));
    }

    private long checkpoint(SandboxId id, CheckpointId image, boolean leaveRunning, Optional<Runnable> atRest) {
        var status = status(id);
        if (status != RuntimeStatus.RUNNING && status != RuntimeStatus.FROZEN)
            throw StasisException.runtimeFailed(id.value(), "checkpoint", "the sandbox's processes are gone", null);
        long start = System.nanoTime();
        boolean wasFrozen = status == RuntimeStatus.FROZEN;
        if (wasFrozen) resume(id); // init must run to let go of its socket
        Path dir = imageStore.create(image);
        var save = SaveRecord.start(imageStore.workDir(image, SAVE_STEP), runsc.sentryLog(id));
        try {
            quiesce(id);
            if (atRest.isPresent()) runsc.hold(id, heldMarker(id));
            runsc.checkpoint(id, dir, leaveRunning);
        } catch (RuntimeException e) {
            if (savedAnyway(id, dir, save)) {
                log.atWarn().addKeyValue("sandbox", id).addKeyValue("image", image).addKeyValue("reason", e.getMessage())
                        .log("runsc checkpoint failed, but the sentry saved the sandbox whole: the checkpoint stands");
                return finishCheckpoint(id, image, leaveRunning, atRest, wasFrozen, start);
            }
            throw undoCheckpoint(id, image, wasFrozen, e);
        }
        return finishCheckpoint(id, image, leaveRunning, atRest, wasFrozen, start);
    }

    /** After a checkpoint that failed before its image was whole, or whose files' snapshot failed: the sandbox runs as before. */
    private RuntimeException undoCheckpoint(SandboxId id, CheckpointId image, boolean wasFrozen, RuntimeException failure) {
        imageStore.delete(image);
        try {
            if (status(id) == RuntimeStatus.FROZEN) resume(id); // held for the save, or by a hold that failed once the sentry had it
            if (status(id) == RuntimeStatus.RUNNING) {
                rebind(id);
                if (wasFrozen) pause(id);
            }
        } catch (RuntimeException undo) {
            failure.addSuppressed(undo);
        }
        return failure;
    }

    private long finishCheckpoint(SandboxId id, CheckpointId image, boolean leaveRunning, Optional<Runnable> atRest, boolean wasFrozen,
                                  long start) {
        if (atRest.isPresent()) {
            try {
                atRest.get().run();
            } catch (RuntimeException e) {
                throw undoCheckpoint(id, image, wasFrozen, e);
            }
        }
        long size = imageStore.seal(image);
        imageStore.deleteWorkDir(image, SAVE_STEP);
        if (leaveRunning) {
            resume(id);
            rebind(id);
            if (wasFrozen) pause(id);
        } else {
            tearDownAfterSave(id);
        }
        log.atInfo().addKeyValue("sandbox", id).addKeyValue("image", image).addKeyValue("leaveRunning", leaveRunning)
                .addKeyValue("bytes", size).addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("gVisor sandbox checkpointed");
        return size;
    }

    /**
     * The sandbox is in its image: its sentry and gofer are ended at once with its cgroups, and
     * runsc's state of it is removed in the background. runsc's delete takes 1.2-1.8 s here even
     * for a sandbox whose processes are gone: it waits until the ended sentry is no longer a zombie,
     * and the host's process 1 reaps it only that late. The hibernating call need not wait; until
     * it is done, {@link #status} says UNKNOWN, as after any end, and a restore or destroy of the
     * same sandbox waits for it ({@link #awaitTeardown}), as does {@link #close}. A service killed
     * meanwhile leaves runsc's state of a sandbox without processes, which the next start's
     * reconciler finds STOPPED and destroys (the catalog keeps it hibernated).
     */
    private void tearDownAfterSave(SandboxId id) {
        connections.forget(id);
        lastKernelCpu.remove(id);
        var done = new CompletableFuture<Void>();
        teardowns.put(id, done);
        cgroups.remove(id);
        Thread.ofVirtual().name("gvisor-teardown-" + id.value()).start(() -> {
            long start = System.nanoTime();
            try {
                if (runsc.hasState(id)) runsc.deleteForce(id);
                log.atDebug().addKeyValue("sandbox", id).addKeyValue("ms", (System.nanoTime() - start) / 1_000_000)
                        .log("saved gVisor sandbox's runsc state removed");
            } catch (RuntimeException e) {
                log.atWarn().addKeyValue("sandbox", id).setCause(e).log("removing a saved gVisor sandbox's runsc state failed; its restore or delete retries");
            } finally {
                teardowns.remove(id, done);
                done.complete(null);
            }
        });
    }

    /**
     * After a runsc checkpoint that failed: waits until the sentry no longer writes the image (a
     * runsc killed after asking leaves it saving), then whether its log says that save succeeded.
     */
    private boolean savedAnyway(SandboxId id, Path imageDir, SaveRecord save) {
        var state = runsc.state(id);
        if (state.isEmpty()) return false;
        long sentry = state.get().pid();
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (HostProcesses.isAlive(sentry) && HostProcesses.holds(sentry, imageDir) && System.nanoTime() < deadline)
            LockSupport.parkNanos(2_000_000);
        return save.outcome() == Runsc.SaveOutcome.SUCCEEDED;
    }

    /** Waits for the background teardown of the sandbox, if one is under way. */
    private void awaitTeardown(SandboxId id) {
        var pending = teardowns.get(id);
        if (pending != null) pending.join();
    }

    /** The service's connections closed, then stasis-init's: it closes ours once its socket file is gone. */
    private void quiesce(SandboxId id) {
        connections.closeAll(id);
        try (var confined = ConfinedRoot.open(bundles.rootOf(id), rootOwner);
             var connection = InitConnection.open(id, confined)) {
            var reply = connection.call(InitFrame.of("quiesce").build());
            if (!reply.verb().equals("ok"))
                throw StasisException.runtimeFailed(id.value(), "quiesce stasis-init", "it answered " + reply, null);
            try {
                connection.call(InitFrame.of("ping").build());
            } catch (StasisException closed) {
                return; // the connection is closed: the socket file is gone
            }
            throw StasisException.runtimeFailed(id.value(), "quiesce stasis-init", "it still answers on its socket", null);
        }
    }

    /**
     * Has stasis-init bind its socket again, and returns once it answers there: the file
     * {@code /.stasis/rebind} made in its root, which a quiesced init looks for every 2 ms (no
     * process to start, where a signal takes a {@code runsc kill}, ~20-40 ms); an init of an image
     * saved by an earlier version, which only knows SIGUSR1, gets that after {@link #REBIND_BY_FILE_WAIT}.
     */
    private void rebind(SandboxId id) {
        long start = System.nanoTime();
        long initPid = SandboxInit.readPid(id, bundles.pidFile(id));
        try (var confined = ConfinedRoot.open(bundles.rootOf(id), rootOwner)) {
            confined.createFile(REBIND_FILE, InputStream.nullInputStream(), 0600, rootOwner);
        } catch (IOException | RuntimeException e) {
            // EEXIST: one is there already, which does the same
            if (!(e instanceof LinuxException l && l.errno() == Errno.EEXIST))
                log.atDebug().addKeyValue("sandbox", id).addKeyValue("reason", e.toString()).log("could not ask init to rebind by file");
        }
        try {
            SandboxInit.awaitAnswer(id, bundles.rootOf(id), rootOwner, initPid, start, REBIND_BY_FILE_WAIT);
            return;
        } catch (StasisException olderInit) {
            log.atInfo().addKeyValue("sandbox", id).log("init did not rebind by file (an image of an earlier version): signalling it");
        }
        runsc.kill(id, "USR1");
        SandboxInit.awaitAnswer(id, bundles.rootOf(id), rootOwner, initPid, System.nanoTime(), START_TIMEOUT);
    }

    @Override
    public void restore(RuntimeSpec spec, CheckpointId image) {
        SandboxId id = spec.id();
        if (!imageStore.isComplete(image))
            throw StasisException.runtimeFailed(id.value(), "runsc restore", "the image " + image + " is missing or incomplete", null);
        long start = System.nanoTime();
        awaitTeardown(id);
        if (runsc.hasState(id)) { // a teardown that failed
            runsc.deleteForce(id);
            cgroups.remove(id);
        }
        Path bundle = writeBundle(spec);
        long restoring = System.nanoTime(), rebinding;
        try {
            withNetwork(spec, launcher -> runsc.restoreDetached(id, bundle, imageStore.dir(image), bundles.pidFile(id), launcher));
            bundles.applyDeferredLimits(id);
            rebinding = System.nanoTime();
            rebind(id);
            processes.setHostname(id, spec.hostname()); // gVisor restored the image's own, which a fork's is not
            serviceFiles.writeInstance(spec, image);
        } catch (RuntimeException e) {
            destroyAfter(id, e);
            throw e;
        }
        long end = System.nanoTime();
        log.atInfo().addKeyValue("sandbox", id).addKeyValue("image", image).addKeyValue("ms", (end - start) / 1_000_000)
                .addKeyValue("runscMs", (rebinding - restoring) / 1_000_000).addKeyValue("initMs", (end - rebinding) / 1_000_000)
                .log("gVisor sandbox restored");
    }

    @Override
    public int awaitEarlierWork(Duration timeout) {
        return runsc.awaitEarlierWork(timeout);
    }

    /** A save the sentry finished after the service died (see {@link #checkpoint}): sealed if its log says it succeeded. */
    @Override
    public OptionalLong completeInterruptedDump(SandboxId sandbox, CheckpointId image) {
        var sealed = imageStore.completeSize(image);
        if (sealed.isPresent()) return sealed;
        var save = SaveRecord.read(imageStore.existingWorkDir(image, SAVE_STEP));
        if (!Files.isDirectory(imageStore.dir(image)) || save.isEmpty() || save.get().outcome() != Runsc.SaveOutcome.SUCCEEDED)
            return OptionalLong.empty();
        long size = imageStore.seal(image);
        imageStore.deleteWorkDir(image, SAVE_STEP);
        log.atInfo().addKeyValue("sandbox", sandbox).addKeyValue("image", image).addKeyValue("bytes", size)
                .log("a gVisor save that ended after the service died succeeded; sealed its image");
        return OptionalLong.of(size);
    }

    /**
     * A sandbox whose checkpoint a crash cut short between the quiesce and the rebind runs on with
     * stasis-init off its socket (the reconciler's thaw has run the tasks runsc held for the save):
     * it is asked to bind it again.
     */
    @Override
    public void adopt(SandboxId id) {
        try {
            bundles.applyDeferredLimits(id); // a crash came between the start and its limits
        } catch (StasisException e) {
            log.atWarn().addKeyValue("sandbox", id).setCause(e).log("the limits of an adopted gVisor sandbox could not be applied");
        }
        if (initAnswers(id)) return;
        try {
            rebind(id);
            log.atInfo().addKeyValue("sandbox", id).log("stasis-init of an adopted gVisor sandbox was off its socket; it is back");
        } catch (RuntimeException e) {
            log.atWarn().addKeyValue("sandbox", id).setCause(e).log("stasis-init of an adopted gVisor sandbox does not answer");
        }
    }

    private boolean initAnswers(SandboxId id) {
        try (var confined = ConfinedRoot.open(bundles.rootOf(id), rootOwner);
             var connection = InitConnection.open(id, confined)) {
            return connection.call(InitFrame.of("ping").build()).verb().equals("ok");
        } catch (StasisException e) {
            return false;
        }
    }

    @Override
    public RuntimeStatus status(SandboxId id) {
        if (teardowns.containsKey(id)) return RuntimeStatus.UNKNOWN; // saved and ended: only runsc's bookkeeping is left
        var state = runsc.state(id);
        if (state.isEmpty()) return RuntimeStatus.UNKNOWN;
        // runsc's file still says running when the sandbox ended by itself (its memory limit ends it whole).
        if (!HostProcesses.isAlive(state.get().pid())) return RuntimeStatus.STOPPED;
        return switch (state.get().status()) {
            case "paused" -> RuntimeStatus.FROZEN; // held by runsc, as earlier versions of the service did
            case "created", "running" -> freezer.isFrozen(cgroups.path(id)) || Files.exists(heldMarker(id)) ? RuntimeStatus.FROZEN : RuntimeStatus.RUNNING;
            default -> RuntimeStatus.STOPPED;
        };
    }

    /**
     * The sandbox's bundle, with the host limits for what it asks ({@link #hostLimits}), networked in
     * a namespace made for it. Its CPU quota waits until runsc has started or restored it
     * ({@link Bundles#applyDeferredLimits}): runsc's own start runs in the sandbox's cgroup (its Go
     * runtime started twice, the kernel's state loaded on several threads), and at one core a fork's
     * restore was throttled for ~60 ms of ~450 here. The sandbox's processes run under it from a few
     * milliseconds after they start.
     */
    private Path writeBundle(RuntimeSpec spec) {
        return bundles.writeWithCpuQuotaDeferred(spec.withResources(hostLimits(spec.resources())), spec.network().isPresent());
    }

    /**
     * Runs a start or restore of {@code spec}: networked, in a namespace made and plugged for it
     * first, whose file goes once runsc has started (the sentry holds the namespace from then on);
     * else with none.
     */
    private void withNetwork(RuntimeSpec spec, Consumer<Optional<List<String>>> start) {
        if (spec.network().isEmpty()) {
            start.accept(Optional.empty());
            return;
        }
        Path netns = bundles.networkNamespaceFile(spec.id());
        releaseNetworkNamespace(spec.id()); // left by a start the service did not see end
        vethPlug.plugNew(spec.id(), netns, spec.network().get());
        try {
            start.accept(Optional.of(vethPlug.sysnetMasked()));
        } finally {
            releaseNetworkNamespace(spec.id());
        }
    }

    private void releaseNetworkNamespace(SandboxId id) {
        Path netns = bundles.networkNamespaceFile(id);
        if (Files.exists(netns, LinkOption.NOFOLLOW_LINKS)) vethPlug.release(id, netns);
    }

    /** After a failed start or restore: nothing of the sandbox stays; what goes wrong here is told with {@code failure}. */
    private void destroyAfter(SandboxId id, RuntimeException failure) {
        try {
            destroy(id);
        } catch (RuntimeException cleanup) {
            failure.addSuppressed(cleanup);
        }
    }

    /** SIGTERM to stasis-init, which passes it to every process and ends when they have; then {@link #destroy}. */
    @Override
    public void stop(SandboxId id, Duration grace) {
        var status = status(id);
        if (status == RuntimeStatus.FROZEN) resume(id);
        if (status == RuntimeStatus.RUNNING || status == RuntimeStatus.FROZEN) {
            runsc.kill(id, "TERM");
            // The sandbox's process ends with its init; /proc tells without starting a runsc per look.
            HostProcesses.awaitEnd(SandboxInit.readPid(id, bundles.pidFile(id)), grace);
        }
        destroy(id);
    }

    @Override
    public void destroy(SandboxId id) {
        awaitTeardown(id);
        pageOuts.stop(id);
        var status = status(id);
        if (status != RuntimeStatus.UNKNOWN) {
            // A paused sandbox's tasks cannot die, and runsc's delete of a running one waits for them in slow steps.
            if (status == RuntimeStatus.FROZEN) resume(id);
            if (status != RuntimeStatus.STOPPED) {
                try {
                    runsc.kill(id, "KILL");
                } catch (StasisException e) {
                    log.atDebug().addKeyValue("sandbox", id).addKeyValue("reason", e.getMessage()).log("kill before delete failed");
                }
            }
            runsc.deleteForce(id);
        }
        runsc.removeControlSockets(id);
        cgroups.remove(id);
        releaseNetworkNamespace(id);
        bundles.forgetRoot(id);
        connections.forget(id);
        lastKernelCpu.remove(id);
        waitingFrozen.remove(id);
        ContainerCleanup.deleteTree(bundles.dir().resolve(id.value()));
        ContainerCleanup.deleteTree(logs.resolve(id.value()));
    }

    @Override
    public Set<SandboxId> listOwned() {
        return ContainerCleanup.owned(runsc.list(), bundles.dir(), logs);
    }

    @Override
    public void close() {
        teardowns.values().forEach(CompletableFuture::join);
        outputNotifier.close();
        runsc.close();
        vethPlug.close();
        cgroups.removeEmptyParents();
    }
}
