package io.stasis.runtime.runc;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.Ids;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.ExecHandle;
import io.stasis.core.spi.RuntimeSpec;
import io.stasis.core.spi.SandboxRuntime;
import io.stasis.core.spi.SpawnSpec;
import io.stasis.fs.linux.ConfinedRoot;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Map;
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
 * {@code runc/} (runc's own state), {@code bundles/<id>/config.json}, {@code logs/<id>/}, and
 * {@code bin/stasis-init}.
 */
public final class RuncRuntime implements SandboxRuntime, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RuncRuntime.class);
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    private static final String CGROUP_FS = "/sys/fs/cgroup";

    private final RuncConfig config;
    private final Runc runc;
    private final Path bundles;
    private final Path logs;
    private final Path initDir;
    private final Map<SandboxId, Path> roots = new ConcurrentHashMap<>();

    public RuncRuntime(RuncConfig config) {
        this.config = config;
        this.bundles = config.stateDir().resolve("bundles");
        this.logs = config.stateDir().resolve("logs");
        this.initDir = config.stateDir().resolve("bin");
        this.runc = new Runc(config.runc(), config.stateDir().resolve("runc"), logs, config.toolTimeout());
        InitBinary.install(initDir);
        log.atInfo().addKeyValue("runc", runc.version()).addKeyValue("stateDir", config.stateDir()).log("runc runtime ready");
    }

    @Override
    public void create(RuntimeSpec spec) {
        SandboxId id = spec.id();
        long start = System.nanoTime();
        Path bundle = bundles.resolve(id.value());
        try {
            Files.createDirectories(bundle);
            var oci = OciSpec.build(JSON, spec.root(), initDir, spec.hostname(), cgroupPath(id), config.idMapBase(), spec.resources());
            JSON.writeValue(bundle.resolve("config.json").toFile(), oci);
        } catch (IOException e) {
            throw StasisException.runtimeFailed(id.value(), "write bundle", e.getMessage(), e);
        }
        roots.put(id, spec.root());
        try {
            Path pidFile = bundle.resolve("init.pid");
            runc.runDetached(id, bundle, pidFile);
            awaitInit(id, spec.root(), readPid(id, pidFile), start + startTimeout().toNanos());
        } catch (RuntimeException e) {
            try {
                destroy(id);
            } catch (RuntimeException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
        log.atDebug().addKeyValue("sandbox", id).addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("container started");
    }

    @Override
    public void updateResources(SandboxId id, Resources resources) {
        CgroupLimits.apply(id, cgroupPath(id), resources);
        // The bundle is what a later restore reads: keep it in step with the cgroups.
        Path config = bundles.resolve(id.value()).resolve("config.json");
        try {
            var spec = (com.fasterxml.jackson.databind.node.ObjectNode) JSON.readTree(config.toFile());
            OciSpec.setResources(spec, resources);
            Path tmp = config.resolveSibling("config.json.tmp");
            JSON.writeValue(tmp.toFile(), spec);
            Files.move(tmp, config, java.nio.file.StandardCopyOption.ATOMIC_MOVE, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
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
            return "; init.log: " + new String(tail, java.nio.charset.StandardCharsets.UTF_8).strip();
        } catch (RuntimeException e) {
            return "";
        }
    }

    @Override
    public ExecHandle spawn(SandboxId id, SpawnSpec spec) {
        Path root = rootOf(id);
        var confined = ConfinedRoot.open(root, config.rootOwner());
        InitConnection connection = null;
        try {
            String execId = Ids.randomSuffix();
            var request = InitFrame.of("spawn").with("id", execId);
            spec.argv().forEach(a -> request.with("arg", a));
            spec.env().forEach((k, v) -> request.with("env", k + "=" + v));
            request.with("cwd", spec.cwd().orElse("/root"));
            if (spec.cwd().isEmpty()) request.with("cwdfallback", 1);
            if (spec.stdin().isPresent()) {
                confined.writeFile(RuncExecHandle.dir(execId) + "/in", spec.stdin().get(), 0600);
                request.with("stdin", 1);
            }
            request.with("wait", 1);
            connection = InitConnection.open(id, confined);
            var reply = connection.call(request.build());
            if (reply.verb().equals("ok"))
                return new RuncExecHandle(id, confined, connection, execId, reply.getLong("pid"));
            connection.close();
            confined.deleteRecursively(RuncExecHandle.dir(execId));
            throw spawnFailure(id, spec, reply);
        } catch (RuntimeException e) {
            if (connection != null) connection.close();
            confined.close();
            throw e;
        }
    }

    private static StasisException spawnFailure(SandboxId id, SpawnSpec spec, InitFrame reply) {
        String stage = reply.get("stage").orElse("?");
        String message = reply.get("msg").orElse("unknown error");
        if (stage.equals("chdir"))
            return new StasisException(ErrorCode.INVALID_REQUEST, "cwd '" + spec.cwd().orElse("/root") + "': " + message,
                    Map.of("field", "cwd", "sandbox", id.value()));
        return StasisException.runtimeFailed(id.value(), "spawn (" + stage + ")", message, null);
    }

    private Path rootOf(SandboxId id) {
        return roots.computeIfAbsent(id, this::rootFromBundle);
    }

    private Path rootFromBundle(SandboxId id) {
        Path config = bundles.resolve(id.value()).resolve("config.json");
        try {
            return Path.of(JSON.readTree(config.toFile()).path("root").path("path").asText());
        } catch (IOException e) {
            throw StasisException.runtimeFailed(id.value(), "find root", "no bundle at " + config, e);
        }
    }

    @Override
    public RuntimeStatus status(SandboxId id) {
        return runc.state(id).map(s -> s.running() ? RuntimeStatus.RUNNING : RuntimeStatus.STOPPED).orElse(RuntimeStatus.UNKNOWN);
    }

    @Override
    public void destroy(SandboxId id) {
        var state = runc.state(id);
        if (state.isPresent()) {
            // Killing process 1 ends the whole pid namespace. Done here, and waited for through
            // /proc, because `runc delete --force` polls for the end in 100 ms steps.
            if (state.get().running() && state.get().pid() > 0) killAndAwait(state.get().pid());
            runc.deleteForce(id);
        }
        roots.remove(id);
        deleteTree(bundles.resolve(id.value()));
        deleteTree(logs.resolve(id.value()));
    }

    private static void killAndAwait(long pid) {
        ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        long deadline = System.nanoTime() + 5_000_000_000L;
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
        if (!Files.exists(dir)) return;
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        } catch (IOException e) {
            throw new UncheckedIOException("removing " + dir, e);
        }
    }
}
