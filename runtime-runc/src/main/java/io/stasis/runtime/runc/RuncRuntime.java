package io.stasis.runtime.runc;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.Ids;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.ExecHandle;
import io.stasis.core.spi.ProcessEntry;
import io.stasis.core.spi.RuntimeSpec;
import io.stasis.core.spi.SandboxRuntime;
import io.stasis.core.spi.SpawnSpec;
import io.stasis.core.spi.StreamReader;
import io.stasis.fs.linux.ConfinedRoot;
import io.stasis.fs.linux.Errno;
import io.stasis.fs.linux.LinuxException;
import io.stasis.host.FileTrees;
import io.stasis.host.MountInfo;
import io.stasis.host.Mounts;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sandboxes as runc containers: all namespaces including a user namespace, the cgroup limits of
 * the request, and stasis-init as process 1. runc runs detached, so sandboxes are not children
 * of the service; all the runtime knows about a sandbox is on disk under its state directory:
 * {@code runc/} (runc's own state), {@code bundles/<id>/config.json}, {@code logs/<id>/},
 * {@code images/<checkpoint>/} (CRIU images), {@code work/} (CRIU logs), {@code bin/}
 * (stasis-init and CRIU's action script).
 */
public final class RuncRuntime implements SandboxRuntime, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RuncRuntime.class);
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    private static final String CGROUP_FS = "/sys/fs/cgroup";
    /** Where a sandbox finds a fresh value after every restore, to reseed what it keeps in memory. */
    static final String INSTANCE_FILE = "/.stasis/instance";
    private static final Duration QUIESCE_TIMEOUT = Duration.ofSeconds(5);
    private static final String BOOT_FILE = "/.stasis/boot";
    private static final String PROC_DIR = "/.stasis/proc";
    /** How long a write to a process's stdin may wait for the process to read. */
    private static final Duration STDIN_WRITE_TIMEOUT = Duration.ofSeconds(30);

    private final RuncConfig config;
    private final Runc runc;
    private final Path bundles;
    private final Path logs;
    private final Path initDir;
    private final Path criuConfig;
    private final VethPlug vethPlug;
    private final Reroot reroot;
    private final Freezer freezer = new Freezer();
    private final MemoryPager pager = new MemoryPager();
    /** Page-outs under way, each with its cancel flag: a thaw stops one before the processes run. */
    private final Map<SandboxId, PageOut> pageOuts = new ConcurrentHashMap<>();
    private final OutputNotifier outputNotifier = new OutputNotifier();
    private final ImageStore images;
    private final Map<SandboxId, Path> roots = new ConcurrentHashMap<>();
    private final Map<SandboxId, Set<InitConnection>> connections = new ConcurrentHashMap<>();
    private final Optional<SamePageMerging> pageMerging;

    public RuncRuntime(RuncConfig config) {
        this.config = config;
        this.bundles = config.stateDir().resolve("bundles");
        this.logs = config.stateDir().resolve("logs");
        this.initDir = config.stateDir().resolve("bin");
        HelperBinary.install(initDir, HelperBinary.INIT);
        if (config.sharePages() && config.criu().isPresent()) {
            this.pageMerging = Optional.of(SamePageMerging.start());
            this.runc = new Runc(config.runc(), config.stateDir().resolve("runc"), logs, config.toolTimeout(),
                    Optional.of(HelperBinary.install(initDir, HelperBinary.CRIU)), Map.of("STASIS_CRIU_BINARY", config.criu().get().toString()));
        } else {
            this.pageMerging = Optional.empty();
            this.runc = new Runc(config.runc(), config.stateDir().resolve("runc"), logs, config.toolTimeout(), config.criu());
        }
        this.images = new ImageStore(config.stateDir());
        this.reroot = Reroot.install(initDir, config.toolTimeout());
        this.vethPlug = VethPlug.install(initDir, config.toolTimeout());
        config.criu().ifPresent(criu -> CriuKerndat.prepare(criu, config.stateDir(), config.toolTimeout()));
        boolean nftablesLock = CriuActionScript.nftablesLockSupported(config.criu(), config.toolTimeout());
        this.criuConfig = CriuActionScript.install(config.stateDir(), vethPlug, nftablesLock);
        log.atInfo().addKeyValue("runc", runc.version()).addKeyValue("criu", config.criu().map(Path::toString).orElse("none"))
                .addKeyValue("networkLock", nftablesLock ? "nftables" : "iptables").addKeyValue("sharePages", pageMerging.isPresent())
                .addKeyValue("stateDir", config.stateDir()).log("runc runtime ready");
    }

    @Override
    public void create(RuntimeSpec spec) {
        SandboxId id = spec.id();
        long start = System.nanoTime();
        Path bundle = writeBundle(spec);
        try {
            Path pidFile = bundle.resolve("init.pid");
            runc.runDetached(id, bundle, pidFile);
            long initPid = readPid(id, pidFile);
            spec.network().ifPresent(link -> vethPlug.plug(id, initPid, link));
            awaitInit(id, spec.root(), initPid, start + startTimeout().toNanos());
            writeBoot(id, spec.root());
        } catch (RuntimeException e) {
            cleanUpAfter(id, e);
            throw e;
        }
        log.atDebug().addKeyValue("sandbox", id).addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("container started");
    }

    @Override
    public boolean canReroot() {
        return true;
    }

    /**
     * {@inheritDoc}
     * <p>Done by {@code stasis-reroot} (see src/main/c/stasis-reroot.c), which moves the sandbox's
     * mounts onto the new root and pivots its mount namespace there; stasis-init then binds its
     * socket in the new root, where this waits for it to answer. The new root gets a boot id of its
     * own, as a start would give it: processes recorded in it by the sandbox it was branched from
     * ended with that sandbox.
     */
    @Override
    public void reroot(SandboxId id, Path newRoot) {
        long start = System.nanoTime();
        long initPid = readPid(id, bundles.resolve(id.value()).resolve("init.pid"));
        if (!HostProcesses.isAlive(initPid)) throw StasisException.runtimeFailed(id.value(), "reroot", "the sandbox's init is not running", null);
        writeBoot(id, newRoot);
        reroot.run(id, initPid, newRoot);
        awaitInit(id, newRoot, initPid, start + startTimeout().toNanos());
        roots.put(id, newRoot);
        log.atDebug().addKeyValue("sandbox", id).addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("sandbox rerooted");
    }

    /**
     * Each fresh start of a sandbox (not a restore) gets a new boot id: background processes of an
     * earlier boot that never wrote an exit status did not end, they were lost with that boot.
     */
    private void writeBoot(SandboxId id, Path root) {
        writeServiceFile(id, root, BOOT_FILE, Ids.randomSuffix().getBytes(StandardCharsets.US_ASCII));
    }

    /**
     * Writes one of the service's own small files into a root. Even a file btrfs would keep
     * inline needs room for its data when written: on a full disk this fails, and says which.
     */
    private void writeServiceFile(SandboxId id, Path root, String file, byte[] content) {
        try (var confined = ConfinedRoot.open(root, config.rootOwner())) {
            writeOwnFile(confined, file, content, 0644);
        } catch (LinuxException e) {
            String step = "write " + file;
            if (e.errno() == Errno.EDQUOT) throw sandboxDiskFull(id, step, e.errnoName(), e);
            if (e.errno() == Errno.ENOSPC) throw poolFull(id, step, e);
            throw StasisException.runtimeFailed(id.value(), step, e.getMessage(), e);
        }
    }

    private static StasisException sandboxDiskFull(SandboxId id, String step, String why, Exception cause) {
        return new StasisException(ErrorCode.QUOTA_EXCEEDED, "the disk of sandbox " + id + " is full (" + why
                + "): no process can start, as its output could not be kept; delete files through the files API to make room",
                Map.of("sandbox", id.value(), "step", step), cause);
    }

    /** The host's pool, not the sandbox's own limit, is out of room: every sandbox on it is refused alike. */
    private static StasisException poolFull(SandboxId id, String step, Exception cause) {
        return new StasisException(ErrorCode.HOST_BUSY, "the host's disk pool is full (ENOSPC at " + step + " of sandbox " + id
                + "): nothing was changed; free room on the host (delete sandboxes, checkpoints or volumes) and try again",
                Map.of("sandbox", id.value(), "step", step), cause);
    }

    private Path writeBundle(RuntimeSpec spec) {
        Path bundle = bundles.resolve(spec.id().value());
        try {
            Files.createDirectories(bundle);
            var oci = OciSpec.build(JSON, spec.root(), initDir, criuConfig, spec.hostname(), cgroupPath(spec.id()),
                    config.idMapBase(), spec.resources());
            if (spec.network().isPresent()) {
                // The sandbox asks Stasis's resolver on its gateway, whatever its image says.
                Path resolvConf = bundle.resolve("resolv.conf");
                Files.writeString(resolvConf, "nameserver " + spec.network().get().gateway().getHostAddress() + "\n");
                OciSpec.bindReadOnly(oci, "/etc/resolv.conf", resolvConf);
            }
            for (var mount : spec.mounts()) OciSpec.bindVolume(oci, mount.destination(), mount.source(), mount.readOnly());
            writeAtomically(bundle.resolve("config.json"), oci);
        } catch (IOException e) {
            throw StasisException.runtimeFailed(spec.id().value(), "write bundle", e.getMessage(), e);
        }
        roots.put(spec.id(), spec.root());
        return bundle;
    }

    private static void writeAtomically(Path file, ObjectNode json) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        JSON.writeValue(tmp.toFile(), json);
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    private void cleanUpAfter(SandboxId id, RuntimeException failure) {
        try {
            destroy(id);
        } catch (RuntimeException cleanup) {
            failure.addSuppressed(cleanup);
        }
    }

    @Override
    public void updateResources(SandboxId id, Resources resources) {
        CgroupLimits.apply(id, cgroupPath(id), resources);
        // The bundle is what a later restore reads: keep it in step with the cgroups.
        Path file = bundles.resolve(id.value()).resolve("config.json");
        try {
            var spec = (ObjectNode) JSON.readTree(file.toFile());
            OciSpec.setResources(spec, resources);
            writeAtomically(file, spec);
        } catch (IOException e) {
            throw StasisException.runtimeFailed(id.value(), "update bundle", e.getMessage(), e);
        }
    }

    private String cgroupPath(SandboxId id) {
        return "/" + config.cgroupParent() + "/" + id.value();
    }

    private static long readPid(SandboxId id, Path pidFile) {
        try {
            return Long.parseLong(Files.readString(pidFile).strip());
        } catch (IOException | NumberFormatException e) {
            throw StasisException.runtimeFailed(id.value(), "start", "runc left no readable pid file at " + pidFile, e);
        }
    }

    /**
     * Waits until stasis-init answers on its socket: it binds it first thing, so this is a matter
     * of a few hundred microseconds after runc returns. Polls briefly, and checks that the process
     * still lives through /proc (cheap) rather than asking runc (a process start each time).
     */
    private void awaitInit(SandboxId id, Path root, long initPid, long deadline) {
        try (var confined = ConfinedRoot.open(root, config.rootOwner())) {
            StasisException last = null;
            long pauseNanos = 100_000;
            while (System.nanoTime() < deadline) {
                try (var connection = InitConnection.open(id, confined)) {
                    if (connection.call(InitFrame.of("ping").build()).verb().equals("ok")) return;
                } catch (StasisException e) {
                    last = e;
                }
                if (!HostProcesses.isAlive(initPid))
                    throw StasisException.runtimeFailed(id.value(), "start", "the sandbox's init exited during start-up"
                            + initLogTail(confined), last);
                LockSupport.parkNanos(pauseNanos);
                pauseNanos = Math.min(pauseNanos * 2, 5_000_000);
            }
            throw StasisException.runtimeFailed(id.value(), "start", "stasis-init did not answer within "
                    + startTimeout().toMillis() + " ms", last);
        }
    }

    private static String initLogTail(ConfinedRoot root) {
        try {
            long size = root.sizeOf("/.stasis/init.log");
            if (size <= 0) return "";
            byte[] tail = root.readAt("/.stasis/init.log", Math.max(0, size - 1000), 1000);
            return "; init.log: " + new String(tail, StandardCharsets.UTF_8).strip();
        } catch (RuntimeException e) {
            return "";
        }
    }

    @Override
    public ExecHandle spawn(SandboxId id, SpawnSpec spec) {
        var confined = ConfinedRoot.open(rootOf(id), config.rootOwner());
        InitConnection connection = null;
        try {
            String execId = Ids.randomSuffix();
            var request = spawnRequest(confined, execId, spec).with("wait", 1);
            connection = InitConnection.open(id, confined);
            var reply = connection.call(request.build());
            if (reply.verb().equals("ok")) {
                var tracked = connections.computeIfAbsent(id, k -> ConcurrentHashMap.newKeySet());
                tracked.add(connection);
                var owned = connection;
                return new RuncExecHandle(id, confined, connection, execId, reply.getLong("pid"), () -> tracked.remove(owned), true, outputNotifier);
            }
            connection.close();
            RuncExecHandle.deleteFiles(confined, execId);
            throw spawnFailure(id, spec, reply);
        } catch (RuntimeException e) {
            if (connection != null) connection.close();
            confined.close();
            throw e;
        }
    }

    /** The spawn frame for {@code spec}, with stdin written beside the process's output files. */
    private static InitFrame.Builder spawnRequest(ConfinedRoot confined, String execId, SpawnSpec spec) {
        var request = InitFrame.of("spawn").with("id", execId);
        spec.argv().forEach(a -> request.with("arg", a));
        spec.env().forEach((k, v) -> request.with("env", k + "=" + v));
        request.with("cwd", spec.cwd().orElse("/root"));
        if (spec.cwd().isEmpty()) request.with("cwdfallback", 1);
        if (spec.stdin().isPresent()) {
            writeOwnFile(confined, RuncExecHandle.dir(execId) + "/in", spec.stdin().get(), 0600);
            request.with("stdin", 1);
        } else if (spec.stdinPipe()) request.with("stdin", "fifo");
        spec.terminal().ifPresent(size -> request.with("pty", size.cols() + "x" + size.rows()));
        return request;
    }

    @Override
    public long startProcess(SandboxId id, String processId, SpawnSpec spec, byte[] label) {
        if (!Ids.isSuffix(processId)) throw new IllegalArgumentException("not a process id: " + processId);
        try (var confined = ConfinedRoot.open(rootOf(id), config.rootOwner())) {
            String dir = RuncExecHandle.dir(processId);
            writeOwnFile(confined, dir + "/label", label, 0644);
            writeOwnFile(confined, dir + "/boot", currentBoot(confined).getBytes(StandardCharsets.US_ASCII), 0644);
            try (var connection = InitConnection.open(id, confined)) {
                var reply = connection.call(spawnRequest(confined, processId, spec).build());
                if (reply.verb().equals("ok")) return reply.getLong("pid");
                RuncExecHandle.deleteFiles(confined, processId);
                throw spawnFailure(id, spec, reply);
            }
        }
    }

    /**
     * Writes one of the service's own small files into a root, without fsync: the host's
     * bookkeeping in a root goes with the sandbox's processes if the host dies, and an fsync costs
     * milliseconds on btrfs.
     */
    private static void writeOwnFile(ConfinedRoot confined, String path, byte[] content, int mode) {
        try {
            confined.writeFile(path, new ByteArrayInputStream(content), OptionalInt.of(mode), false);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // cannot happen: the content is in memory
        }
    }

    /** The names in the processes' directory; none when it is not there yet. */
    private static List<String> processNames(ConfinedRoot confined) {
        try {
            return confined.list(PROC_DIR).stream().map(ConfinedRoot.Entry::name).toList();
        } catch (LinuxException e) {
            if (e.is(Errno.ENOENT) || e.is(Errno.ENOTDIR)) return List.of();
            throw e;
        }
    }

    private static String currentBoot(ConfinedRoot confined) {
        if (confined.sizeOf(BOOT_FILE) < 0) return "";
        return new String(confined.readAt(BOOT_FILE, 0, 64), StandardCharsets.US_ASCII).strip();
    }

    @Override
    public List<ProcessEntry> processes(SandboxId id) {
        try (var confined = ConfinedRoot.open(rootOf(id), config.rootOwner())) {
            String boot = currentBoot(confined);
            var out = new ArrayList<ProcessEntry>();
            for (String name : processNames(confined)) {
                String dir = RuncExecHandle.dir(name);
                if (!Ids.isSuffix(name) || confined.sizeOf(dir + "/label") < 0) continue; // a run-and-wait command's
                long pid = pidOf(confined, dir);
                var exit = RuncExecHandle.readExit(confined, name);
                String processBoot = confined.sizeOf(dir + "/boot") < 0 ? ""
                        : new String(confined.readAt(dir + "/boot", 0, 64), StandardCharsets.US_ASCII).strip();
                boolean lost = exit.isEmpty() && !processBoot.equals(boot);
                out.add(new ProcessEntry(name, pid, confined.readAt(dir + "/label", 0, 1 << 20), exit, lost,
                        Math.max(0, confined.sizeOf(dir + "/out")), Math.max(0, confined.sizeOf(dir + "/err"))));
            }
            return out;
        }
    }

    private static long pidOf(ConfinedRoot confined, String dir) {
        try {
            return Long.parseLong(new String(confined.readAt(dir + "/pid", 0, 32), StandardCharsets.US_ASCII).strip());
        } catch (RuntimeException e) {
            return 0;
        }
    }

    @Override
    public ExecHandle attach(SandboxId id, String processId) {
        var confined = ConfinedRoot.open(rootOf(id), config.rootOwner());
        return new RuncExecHandle(id, confined, null, processId, pidOf(confined, RuncExecHandle.dir(processId)), () -> { }, false, outputNotifier);
    }

    @Override
    public void signal(SandboxId id, long pid, int signal) {
        try (var confined = ConfinedRoot.open(rootOf(id), config.rootOwner());
             var connection = InitConnection.open(id, confined)) {
            var reply = connection.call(InitFrame.of("kill").with("pid", pid).with("signal", signal).build());
            if (!reply.verb().equals("ok")) {
                String message = reply.get("msg").orElse("unknown error");
                if (reply.get("errno").map("3"::equals).orElse(false))
                    throw new StasisException(ErrorCode.INVALID_STATE, "process " + pid + " has ended", Map.of("pid", pid, "sandbox", id.value()));
                throw StasisException.runtimeFailed(id.value(), "signal", message, null);
            }
        }
    }

    @Override
    public void writeStdin(SandboxId id, String processId, byte[] data) {
        if (!Ids.isSuffix(processId)) throw new IllegalArgumentException("not a process id: " + processId);
        try (var confined = ConfinedRoot.open(rootOf(id), config.rootOwner())) {
            confined.writeToFifo(RuncExecHandle.dir(processId) + "/in", data, STDIN_WRITE_TIMEOUT);
        } catch (LinuxException e) {
            if (e.is(Errno.ENOENT) || e.is(Errno.ENXIO) || e.is(Errno.EPIPE)
                    || e.is(Errno.EINVAL))
                throw new StasisException(ErrorCode.INVALID_STATE, "the process's standard input is not open (it ended, stdin was closed, "
                        + "or it was started without \"stdin\": true)", Map.of("sandbox", id.value()));
            if (e.is(Errno.EAGAIN))
                throw new StasisException(ErrorCode.HOST_BUSY, "the process does not read its standard input; "
                        + (e.problem().orElse("part of the data was written")), Map.of("sandbox", id.value()));
            throw StasisException.runtimeFailed(id.value(), "write stdin", e.getMessage(), e);
        }
    }

    @Override
    public void closeStdin(SandboxId id, String processId) {
        initCall(id, InitFrame.of("closestdin").with("id", processId).build(), "close stdin");
    }

    @Override
    public void resizeTerminal(SandboxId id, String processId, SpawnSpec.TerminalSize size) {
        initCall(id, InitFrame.of("resize").with("id", processId).with("cols", size.cols()).with("rows", size.rows()).build(), "resize");
    }

    private void initCall(SandboxId id, InitFrame request, String step) {
        try (var confined = ConfinedRoot.open(rootOf(id), config.rootOwner());
             var connection = InitConnection.open(id, confined)) {
            var reply = connection.call(request);
            if (reply.verb().equals("ok")) return;
            if (reply.get("errno").map(e -> e.equals("3") || e.equals("22")).orElse(false))
                throw new StasisException(ErrorCode.INVALID_STATE, step + ": " + reply.get("msg").orElse("not possible now"),
                        Map.of("sandbox", id.value()));
            throw StasisException.runtimeFailed(id.value(), step, reply.get("msg").orElse("unknown error"), null);
        }
    }

    @Override
    public void forgetProcess(SandboxId id, String processId) {
        if (!Ids.isSuffix(processId)) return;
        try (var confined = ConfinedRoot.open(rootOf(id), config.rootOwner())) {
            RuncExecHandle.deleteFiles(confined, processId);
        }
    }

    private static final String EDQUOT = "122";
    private static final String ENOSPC = "28";

    private static StasisException spawnFailure(SandboxId id, SpawnSpec spec, InitFrame reply) {
        String stage = reply.get("stage").orElse("?");
        String message = reply.get("msg").orElse("unknown error");
        if (stage.equals("chdir"))
            return new StasisException(ErrorCode.INVALID_REQUEST, "cwd '" + spec.cwd().orElse("/root") + "': " + message,
                    Map.of("field", "cwd", "sandbox", id.value()));
        // The process's output files are on the sandbox's disk: a full one cannot take them.
        String step = "spawn (" + stage + ")";
        if (reply.get("errno").filter(EDQUOT::equals).isPresent()) return sandboxDiskFull(id, step, message, null);
        if (reply.get("errno").filter(ENOSPC::equals).isPresent()) return poolFull(id, step, null);
        return StasisException.runtimeFailed(id.value(), step, message, null);
    }

    private Path rootOf(SandboxId id) {
        return roots.computeIfAbsent(id, this::rootFromBundle);
    }

    private Path rootFromBundle(SandboxId id) {
        Path file = bundles.resolve(id.value()).resolve("config.json");
        try {
            return Path.of(JSON.readTree(file.toFile()).path("root").path("path").asText());
        } catch (IOException e) {
            throw StasisException.runtimeFailed(id.value(), "find root", "no bundle at " + file, e);
        }
    }

    /**
     * Freezes the sandbox once stasis-init holds no connection of the service: a frozen init could
     * not take note of a connection the service closes afterwards, and a checkpoint would find it.
     */
    @Override
    public void freeze(SandboxId id) {
        if (freezer.isFrozen(cgroupPath(id))) return;
        quiesce(id, initPid(id));
        freezer.freeze(id, cgroupPath(id));
    }

    /**
     * The host pid of the sandbox's stasis-init if it runs: the pid runc wrote when it last started
     * or restored the sandbox, if that process lives and is in the sandbox's cgroup (a pid can be
     * reused). Only without a readable pid file is {@code runc state} asked: starting runc costs
     * ~15 ms of CPU here, and a delete asked it twice.
     */
    private OptionalLong runningInit(SandboxId id) {
        long pid;
        try {
            pid = Long.parseLong(Files.readString(bundles.resolve(id.value()).resolve("init.pid")).strip());
        } catch (IOException | NumberFormatException e) {
            return runc.state(id).filter(s -> s.running() && s.pid() > 0).map(s -> OptionalLong.of(s.pid()))
                    .orElse(OptionalLong.empty());
        }
        return HostProcesses.isAlive(pid) && HostProcesses.inCgroup(pid, cgroupPath(id)) ? OptionalLong.of(pid)
                : OptionalLong.empty();
    }

    /** The host pid of the sandbox's stasis-init, as runc reported it when it started the sandbox. */
    private long initPid(SandboxId id) {
        try {
            return Long.parseLong(Files.readString(bundles.resolve(id.value()).resolve("init.pid")).strip());
        } catch (IOException | NumberFormatException e) {
            return requireContainer(id, "find init").pid();
        }
    }

    @Override
    public void thaw(SandboxId id) {
        long start = System.nanoTime();
        stopPageOut(id);
        String cgroup = cgroupPath(id);
        // Back from standby (also one that a restart of the service lost track of): the small mappings
        // are asked for before the processes run, so that what they touch first is on its way in.
        boolean fromStandby = pager.swapped(cgroup) > 0;
        if (fromStandby) Thread.ofVirtual().name("stasis-prefetch-" + id.value()).start(() -> pager.prefetch(cgroup));
        freezer.thaw(id, cgroup);
        if (fromStandby) log.atDebug().addKeyValue("sandbox", id).addKeyValue("us", (System.nanoTime() - start) / 1000).log("thawed from standby");
    }

    @Override
    public void standby(SandboxId id) {
        freeze(id);
        String cgroup = cgroupPath(id);
        var pageOut = new PageOut();
        var previous = pageOuts.put(id, pageOut);
        if (previous != null) previous.cancelAndWait();
        pageOut.thread = Thread.ofVirtual().name("stasis-page-out-" + id.value()).start(() -> {
            long start = System.nanoTime();
            try {
                long released = pager.pageOut(id, cgroup, () -> pageOut.cancelled);
                log.atInfo().addKeyValue("sandbox", id).addKeyValue("releasedBytes", released)
                        .addKeyValue("swappedBytes", pager.swapped(cgroup)).addKeyValue("cancelled", pageOut.cancelled)
                        .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("standby memory paged out");
            } catch (RuntimeException e) {
                log.atWarn().addKeyValue("sandbox", id).setCause(e).log("standby page-out failed; the sandbox stays frozen");
            } finally {
                pageOuts.remove(id, pageOut);
            }
        });
    }

    @Override
    public long residentBytes(SandboxId id) {
        return pager.charged(cgroupPath(id));
    }

    @Override
    public long swappedBytes(SandboxId id) {
        return pager.swapped(cgroupPath(id));
    }

    /** Stops the sandbox's page-out, if one is under way: before it runs, is dumped or goes. */
    private void stopPageOut(SandboxId id) {
        var pageOut = pageOuts.remove(id);
        if (pageOut != null) pageOut.cancelAndWait();
    }

    /** A page-out in the background, and how a thaw stops it. */
    private static final class PageOut {
        volatile boolean cancelled;
        volatile Thread thread;

        void cancelAndWait() {
            cancelled = true;
            var t = thread;
            if (t == null) return;
            try {
                t.join(Duration.ofSeconds(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private Runc.ContainerState requireContainer(SandboxId id, String step) {
        return runc.state(id).filter(Runc.ContainerState::running)
                .orElseThrow(() -> StasisException.runtimeFailed(id.value(), step, "the sandbox's processes are gone", null));
    }

    @Override
    public long checkpoint(SandboxId id, CheckpointId image, boolean leaveRunning) {
        if (config.criu().isEmpty())
            throw StasisException.runtimeFailed(id.value(), "checkpoint", "no CRIU is configured (install it with ./stasis setup)", null);
        var container = requireContainer(id, "checkpoint");
        stopPageOut(id);
        long start = System.nanoTime();
        boolean wasFrozen = freezer.isFrozen(cgroupPath(id));
        Path dir = images.create(image);
        Path work = images.workDir(image, "dump");
        try {
            // CRIU cannot dump a socket whose peer is outside the sandbox: the service lets go of
            // its connections to stasis-init first (exec handles then watch the exit file). A
            // frozen init cannot close its ends: it runs for that moment.
            if (wasFrozen && (connections.containsKey(id) || HostProcesses.socketCount(container.pid()) > 1)) {
                freezer.thaw(id, cgroupPath(id));
                quiesce(id, container.pid());
            } else if (!wasFrozen) quiesce(id, container.pid());
            // Frozen by us, CRIU does not poll the v1 freezer in 100 ms steps (docs/HOST.md).
            freezer.freeze(id, cgroupPath(id));
            runc.checkpoint(id, dir, work, leaveRunning);
        } catch (RuntimeException e) {
            if (CriuLog.dumpFinished(work.resolve("dump.log"))) {
                // runc died (killed) after its CRIU had ended the dump: the image is whole, and
                // without --leave-running CRIU has ended the processes, so undoing would lose them.
                log.atWarn().addKeyValue("sandbox", id).addKeyValue("image", image).addKeyValue("reason", e.getMessage())
                        .log("runc failed after CRIU's dump had finished; keeping the dump");
                return finishCheckpoint(id, image, leaveRunning, wasFrozen, start);
            }
            // read the log before the work directory goes
            Path dumpLog = work.resolve("dump.log");
            var failure = CriuLog.unsupportedState(dumpLog)
                    .<RuntimeException>map(why -> new StasisException(ErrorCode.CHECKPOINT_UNSUPPORTED,
                            "sandbox " + id + " cannot be checkpointed now: " + why, Map.of("sandbox", id.value()), e))
                    .or(() -> CriuLog.diskFull(dumpLog).map(why -> new StasisException(ErrorCode.HOST_BUSY,
                            "the host's disk is full where images are kept (" + dir.getParent() + "): CRIU could not write the image of sandbox "
                                    + id + " (" + why + "); it runs on untouched; free room and try again",
                            Map.of("sandbox", id.value(), "step", "checkpoint"), e)))
                    .orElseGet(() -> withCriuLog(e, dumpLog));
            images.delete(image);
            if (!wasFrozen && runc.state(id).isPresent()) freezer.thaw(id, cgroupPath(id));
            throw failure;
        }
        return finishCheckpoint(id, image, leaveRunning, wasFrozen, start);
    }

    private long finishCheckpoint(SandboxId id, CheckpointId image, boolean leaveRunning, boolean wasFrozen, long start) {
        if (leaveRunning && !wasFrozen) freezer.thaw(id, cgroupPath(id));
        if (!leaveRunning) forgetContainer(id);
        long size = images.seal(image);
        log.atInfo().addKeyValue("sandbox", id).addKeyValue("image", image).addKeyValue("leaveRunning", leaveRunning)
                .addKeyValue("bytes", size).addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("checkpointed");
        return size;
    }

    /** Closes the service's connections to the sandbox's init and waits until init has closed its ends. */
    private void quiesce(SandboxId id, long initPid) {
        var open = connections.remove(id);
        if (open != null) open.forEach(InitConnection::close);
        long deadline = System.nanoTime() + QUIESCE_TIMEOUT.toNanos();
        long pause = 50_000;
        while (HostProcesses.socketCount(initPid) > 1) {
            if (System.nanoTime() > deadline)
                throw StasisException.runtimeFailed(id.value(), "checkpoint", "stasis-init still holds connections from the service", null);
            LockSupport.parkNanos(pause);
            pause = Math.min(pause * 2, 2_000_000);
        }
    }

    /** After a dump that ended the container: runc's state is gone; the bundle stays for the restore. */
    private void forgetContainer(SandboxId id) {
        if (runc.state(id).isPresent()) runc.deleteForce(id);
        connections.remove(id);
    }

    private static RuntimeException withCriuLog(RuntimeException e, Path criuLog) {
        String errors = CriuLog.errors(criuLog);
        if (errors.isEmpty() || !(e instanceof StasisException s)) return e;
        return new StasisException(s.code(), s.getMessage() + errors, s.details(), s);
    }

    @Override
    public void restore(RuntimeSpec spec, CheckpointId image) {
        SandboxId id = spec.id();
        if (!images.isComplete(image))
            throw StasisException.runtimeFailed(id.value(), "restore", "the image " + image + " is missing or incomplete", null);
        long start = System.nanoTime();
        Path bundle = writeBundle(spec);
        Path work = images.workDir(image, "restore-" + id.value());
        try {
            Path pidFile = bundle.resolve("init.pid");
            Files.deleteIfExists(pidFile);
            var environment = new HashMap<>(Map.of(CriuActionScript.HOSTNAME_VARIABLE, spec.hostname()));
            spec.network().ifPresent(link -> environment.put(VethPlug.LINK_VARIABLE, VethPlug.arguments(link)));
            long pid;
            try {
                runc.restoreDetached(id, bundle, images.dir(image), work, pidFile, environment);
                pid = readPid(id, pidFile);
            } catch (StasisException e) {
                pid = restoredDespite(id, e);
            }
            awaitInit(id, spec.root(), pid, start + startTimeout().toNanos());
            writeInstance(spec, image);
        } catch (IOException e) {
            var failure = StasisException.runtimeFailed(id.value(), "restore", e.getMessage(), e);
            cleanUpAfter(id, failure);
            throw failure;
        } catch (RuntimeException e) {
            var failure = withCriuLog(e, work.resolve("restore.log"));
            cleanUpAfter(id, failure);
            throw failure;
        }
        log.atInfo().addKeyValue("sandbox", id).addKeyValue("image", image)
                .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("restored");
    }

    /**
     * The init pid of a restore whose runc failed (killed) after CRIU had resumed the processes,
     * else rethrows {@code failure}. Once runc has saved the container's state at CRIU's
     * post-restore step, CRIU resumes the processes without it; they run and change the root, so
     * undoing would leave a root the image no longer matches (a file a process had open, renamed
     * meanwhile, and every later restore failed). What runc would have done at its end is done
     * here: unmount what it mounted for CRIU.
     */
    private long restoredDespite(SandboxId id, StasisException failure) {
        Optional<Runc.ContainerState> survivor;
        try {
            survivor = runc.state(id).filter(Runc.ContainerState::running).filter(s -> HostProcesses.isAlive(s.pid()));
        } catch (RuntimeException e) {
            failure.addSuppressed(e); // runc's state is half written: nothing to keep
            throw failure;
        }
        if (survivor.isEmpty()) throw failure;
        log.atWarn().addKeyValue("sandbox", id).addKeyValue("pid", survivor.get().pid()).addKeyValue("reason", failure.getMessage())
                .log("runc failed after CRIU had resumed the sandbox's processes; keeping them");
        runc.unmountLeftInState(id);
        unmountLeftInRoot(id);
        return survivor.get().pid();
    }

    /**
     * A restored copy shares its parent's memory, random generators included. The kernel's
     * generator (getrandom, /dev/urandom) is not in the image and differs per copy; for what lives
     * in process memory, the sandbox finds a fresh value in {@value #INSTANCE_FILE} after every
     * restore, which processes that care re-read and reseed from (see docs/SECURITY.md).
     */
    private void writeInstance(RuntimeSpec spec, CheckpointId image) {
        byte[] seed = new byte[32];
        new SecureRandom().nextBytes(seed);
        String text = "sandbox=" + spec.id() + "\ncheckpoint=" + image + "\nseed=" + HexFormat.of().formatHex(seed) + "\n";
        writeServiceFile(spec.id(), spec.root(), INSTANCE_FILE, text.getBytes(StandardCharsets.US_ASCII));
    }

    @Override
    public OptionalLong imageSize(CheckpointId image) {
        return images.completeSize(image);
    }

    @Override
    public <R> R exportImage(CheckpointId image, StreamReader<R> reader) {
        try {
            return images.exportTo(image, reader);
        } catch (IOException e) {
            throw new StasisException(ErrorCode.RUNTIME_FAILED, "export of image " + image + " failed: " + e.getMessage(),
                    Map.of("checkpoint", image.value(), "step", "export image"), e);
        }
    }

    @Override
    public long importImage(CheckpointId image, InputStream stream) {
        if (images.isComplete(image) || Files.exists(images.dir(image)))
            throw new StasisException(ErrorCode.RUNTIME_FAILED, "import of image " + image + " failed: it exists already",
                    Map.of("checkpoint", image.value(), "step", "import image"));
        try {
            return images.importFrom(image, stream);
        } catch (IOException e) {
            throw new StasisException(ErrorCode.RUNTIME_FAILED, "import of image " + image + " failed: " + e.getMessage(),
                    Map.of("checkpoint", image.value(), "step", "import image"), e);
        }
    }

    @Override
    public void deleteImage(CheckpointId image) {
        images.delete(image);
    }

    @Override
    public Set<CheckpointId> listImages() {
        return images.list();
    }

    @Override
    public int awaitEarlierWork(Duration timeout) {
        var earlier = runc.atWork();
        if (earlier.isEmpty()) return 0;
        log.atInfo().addKeyValue("pids", earlier).log("runc processes of an earlier run are at work; waiting for them to end");
        long deadline = System.nanoTime() + timeout.toNanos();
        for (long pid : earlier) {
            awaitEnd(pid, Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
            if (HostProcesses.isAlive(pid)) {
                log.atWarn().addKeyValue("pid", pid).addKeyValue("timeoutMs", timeout.toMillis())
                        .log("a runc process of an earlier run is still at work; settling without its outcome");
                break;
            }
        }
        return earlier.size();
    }

    @Override
    public OptionalLong completeInterruptedDump(CheckpointId image) {
        var sealed = images.completeSize(image);
        if (sealed.isPresent()) return sealed;
        if (!Files.isDirectory(images.dir(image)) || !CriuLog.dumpFinished(images.existingWorkDir(image, "dump").resolve("dump.log")))
            return OptionalLong.empty();
        long size = images.seal(image);
        log.atInfo().addKeyValue("image", image).addKeyValue("bytes", size).log("a dump that ended after the service died is complete; sealed it");
        return OptionalLong.of(size);
    }

    @Override
    public RuntimeStatus status(SandboxId id) {
        var state = runc.state(id);
        if (state.isEmpty()) return RuntimeStatus.UNKNOWN;
        if (!state.get().running()) return RuntimeStatus.STOPPED;
        return freezer.isFrozen(cgroupPath(id)) ? RuntimeStatus.FROZEN : RuntimeStatus.RUNNING;
    }

    @Override
    public Duration cpuUsage(SandboxId id) {
        return CgroupLimits.cpuUsage(cgroupPath(id));
    }

    @Override
    public void stop(SandboxId id, Duration grace) {
        stopPageOut(id);
        var init = runningInit(id);
        if (init.isPresent()) {
            freezer.thaw(id, cgroupPath(id));
            // stasis-init passes SIGTERM to every process and ends when they have.
            ProcessHandle.of(init.getAsLong()).ifPresent(ProcessHandle::destroy);
            awaitEnd(init.getAsLong(), grace);
        }
        destroy(id);
    }

    @Override
    public void destroy(SandboxId id) {
        stopPageOut(id);
        if (runc.hasState(id)) {
            var init = runningInit(id);
            if (init.isPresent()) {
                // A frozen task cannot die: thaw first. Killing process 1 ends the whole pid
                // namespace; waiting through /proc beats `runc delete --force`, which polls in 100 ms steps.
                freezer.thaw(id, cgroupPath(id));
                ProcessHandle.of(init.getAsLong()).ifPresent(ProcessHandle::destroyForcibly);
                awaitEnd(init.getAsLong(), Duration.ofSeconds(5));
            }
            // Before runc delete: it removes its state directory recursively, and through a criu-root
            // a killed restore left mounted it deleted the sandbox's own files.
            runc.unmountLeftInState(id);
            if (runc.hasWholeState(id)) {
                try {
                    runc.deleteForce(id);
                } catch (StasisException e) {
                    // runc died on the way (killed): what it did not do, the steps below do.
                    log.atWarn().addKeyValue("sandbox", id).addKeyValue("reason", e.getMessage()).log("runc delete failed; removing what it left");
                }
            }
            runc.removeLeftState(id);
        }
        unmountLeftInRoot(id);
        removeCgroupsLeft(id);
        roots.remove(id);
        connections.remove(id);
        deleteTree(bundles.resolve(id.value()));
        deleteTree(logs.resolve(id.value()));
    }

    /**
     * Mounts in the sandbox's root as the host sees it. There are none but while runc prepares a
     * restore: it binds the sandbox's mounts (resolv.conf, stasis-init, volumes) into the root on the
     * host for CRIU and takes them away at its end; a runc killed meanwhile left them, and the next
     * restore refused the root ("possibly malicious path").
     */
    private void unmountLeftInRoot(SandboxId id) {
        Path root;
        try {
            root = rootOf(id);
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

    /**
     * The sandbox's cgroups where runc's state no longer names them: a runc killed in the middle of a
     * restore left them (empty, or with tasks CRIU had begun to restore), and runc delete then knows
     * nothing of them. Whatever is in them is killed, then they are removed.
     */
    private void removeCgroupsLeft(SandboxId id) {
        var left = new ArrayList<Path>();
        try (Stream<Path> controllers = Files.list(Path.of(CGROUP_FS))) {
            controllers.map(c -> c.resolve(config.cgroupParent()).resolve(id.value())).filter(Files::isDirectory).forEach(left::add);
        } catch (IOException e) {
            log.atWarn().addKeyValue("sandbox", id).setCause(e).log("could not list cgroup controllers");
            return;
        }
        if (left.isEmpty()) return;
        try {
            freezer.thaw(id, cgroupPath(id)); // a frozen task takes its SIGKILL only once thawed
        } catch (RuntimeException e) {
            // no freezer cgroup left: nothing is frozen
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        for (Path cgroup : left) {
            while (true) {
                try {
                    Files.delete(cgroup);
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
        log.atInfo().addKeyValue("sandbox", id).addKeyValue("cgroups", left.size()).log("cgroups runc no longer knew removed");
    }

    private static void awaitEnd(long pid, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        long pauseNanos = 100_000;
        while (HostProcesses.isAlive(pid) && System.nanoTime() < deadline) {
            LockSupport.parkNanos(pauseNanos);
            pauseNanos = Math.min(pauseNanos * 2, 10_000_000);
        }
    }

    @Override
    public Set<SandboxId> listOwned() {
        var ids = new TreeSet<SandboxId>();
        runc.list().stream().filter(SandboxId::isValid).map(SandboxId::new).forEach(ids::add);
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

    /** Removes the parent cgroups of the sandboxes where they are empty. */
    @Override
    public void close() {
        outputNotifier.close();
        pageMerging.ifPresent(SamePageMerging::close);
        try (Stream<Path> controllers = Files.list(Path.of(CGROUP_FS))) {
            controllers.map(c -> c.resolve(config.cgroupParent())).filter(Files::isDirectory).forEach(parent -> {
                try {
                    Files.delete(parent);
                } catch (IOException e) {
                    log.atDebug().addKeyValue("cgroup", parent).log("cgroup parent still in use");
                }
            });
        } catch (IOException e) {
            log.atWarn().setCause(e).log("could not list cgroup controllers");
        }
    }

    private static void deleteTree(Path dir) {
        try {
            FileTrees.deleteRecursivelyUnmounting(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("removing " + dir, e);
        }
    }
}
