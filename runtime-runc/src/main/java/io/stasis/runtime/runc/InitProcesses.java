package io.stasis.runtime.runc;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.Ids;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.ExecHandle;
import io.stasis.core.spi.FileOwner;
import io.stasis.core.spi.ProcessEntry;
import io.stasis.core.spi.SandboxProcesses;
import io.stasis.core.spi.SpawnSpec;
import io.stasis.fs.linux.ConfinedRoot;
import io.stasis.fs.linux.Errno;
import io.stasis.fs.linux.LinuxException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;

/**
 * The processes of running sandboxes, through each sandbox's stasis-init: it spawns them, and
 * keeps their output, stdin and exit status in files under {@code /.stasis/proc/<id>/} of the
 * sandbox's root, which outlive the service.
 */
final class InitProcesses implements SandboxProcesses {
    private static final String PROC_DIR = "/.stasis/proc";
    /** How long a write to a process's stdin may wait for the process to read. */
    private static final Duration STDIN_WRITE_TIMEOUT = Duration.ofSeconds(30);
    /** Bytes per stdin frame to stasis-init (sent as hex): as much as a pipe holds. */
    private static final int STDIN_FRAME_BYTES = 64 << 10;
    private static final String EDQUOT = "122";
    private static final String ENOSPC = "28";
    private static final String ESRCH = "3";
    private static final String EPIPE = "32";

    private final Bundles bundles;
    private final FileOwner rootOwner;
    private final InitConnections connections;
    private final OutputNotifier outputNotifier;
    private final StdinPath stdinPath;

    /** How bytes for a process's stdin reach its FIFO inside the sandbox. */
    enum StdinPath {
        /** Written to the FIFO through the root on the host (runc: the FIFO is the kernel's, seen from both sides). */
        HOST_FIFO,
        /**
         * Sent to stasis-init, which writes them into the FIFO it keeps open (gVisor: a FIFO made
         * inside exists only in the sentry, and a host write never reaches its reader).
         */
        INIT_SOCKET
    }

    InitProcesses(Bundles bundles, FileOwner rootOwner, InitConnections connections, OutputNotifier outputNotifier, StdinPath stdinPath) {
        this.bundles = bundles;
        this.rootOwner = rootOwner;
        this.connections = connections;
        this.outputNotifier = outputNotifier;
        this.stdinPath = stdinPath;
    }

    @Override
    public ExecHandle spawn(SandboxId id, SpawnSpec spec) {
        var confined = ConfinedRoot.open(bundles.rootOf(id), rootOwner);
        InitConnection connection = null;
        try {
            String execId = Ids.randomSuffix();
            var request = spawnRequest(confined, execId, spec).with("wait", 1);
            connection = InitConnection.open(id, confined);
            var reply = connection.call(request.build());
            if (reply.verb().equals("ok")) {
                Runnable untrack = connections.track(id, connection);
                return new RuncExecHandle(id, confined, connection, execId, reply.getLong("pid"), untrack, true, outputNotifier);
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
            ServiceFiles.writeOwnFile(confined, RuncExecHandle.dir(execId) + "/in", spec.stdin().get(), 0600);
            request.with("stdin", 1);
        } else if (spec.stdinPipe()) request.with("stdin", "fifo");
        spec.terminal().ifPresent(size -> request.with("pty", size.cols() + "x" + size.rows()));
        spec.user().ifPresent(user -> request.with("user", user.uid() + ":" + user.gid()
                + user.groups().stream().map(String::valueOf).reduce((a, b) -> a + "," + b).map(g -> ":" + g).orElse("")));
        return request;
    }

    @Override
    public long startProcess(SandboxId id, String processId, SpawnSpec spec, byte[] label) {
        if (!Ids.isSuffix(processId)) throw new IllegalArgumentException("not a process id: " + processId);
        try (var confined = ConfinedRoot.open(bundles.rootOf(id), rootOwner)) {
            String dir = RuncExecHandle.dir(processId);
            ServiceFiles.writeOwnFile(confined, dir + "/label", label, 0644);
            ServiceFiles.writeOwnFile(confined, dir + "/boot", ServiceFiles.currentBoot(confined).getBytes(StandardCharsets.US_ASCII), 0644);
            try (var connection = InitConnection.open(id, confined)) {
                var reply = connection.call(spawnRequest(confined, processId, spec).build());
                if (reply.verb().equals("ok")) return reply.getLong("pid");
                RuncExecHandle.deleteFiles(confined, processId);
                throw spawnFailure(id, spec, reply);
            }
        }
    }

    @Override
    public List<ProcessEntry> processes(SandboxId id) {
        try (var confined = ConfinedRoot.open(bundles.rootOf(id), rootOwner)) {
            String boot = ServiceFiles.currentBoot(confined);
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
        var confined = ConfinedRoot.open(bundles.rootOf(id), rootOwner);
        return new RuncExecHandle(id, confined, null, processId, pidOf(confined, RuncExecHandle.dir(processId)), () -> { }, false, outputNotifier);
    }

    @Override
    public void signal(SandboxId id, long pid, int signal) {
        var reply = ask(id, InitFrame.of("kill").with("pid", pid).with("signal", signal).build());
        if (!reply.verb().equals("ok")) {
            String message = reply.get("msg").orElse("unknown error");
            if (reply.get("errno").map("3"::equals).orElse(false))
                throw new StasisException(ErrorCode.INVALID_STATE, "process " + pid + " has ended", Map.of("pid", pid, "sandbox", id.value()));
            throw StasisException.runtimeFailed(id.value(), "signal", message, null);
        }
    }

    @Override
    public void writeStdin(SandboxId id, String processId, byte[] data) {
        if (!Ids.isSuffix(processId)) throw new IllegalArgumentException("not a process id: " + processId);
        try (var confined = ConfinedRoot.open(bundles.rootOf(id), rootOwner)) {
            if (stdinPath == StdinPath.INIT_SOCKET) writeThroughInit(id, confined, processId, data);
            else confined.writeToFifo(RuncExecHandle.dir(processId) + "/in", data, STDIN_WRITE_TIMEOUT);
        } catch (LinuxException e) {
            if (e.is(Errno.ENOENT) || e.is(Errno.ENXIO) || e.is(Errno.EPIPE)
                    || e.is(Errno.EINVAL))
                throw stdinNotOpen(id);
            if (e.is(Errno.EAGAIN)) throw stdinNotRead(id, e.problem().orElse("part of the data was written"));
            throw StasisException.runtimeFailed(id.value(), "write stdin", e.getMessage(), e);
        }
    }

    /** The bytes in frames to stasis-init, each part it could not take yet sent again until the timeout. */
    private static void writeThroughInit(SandboxId id, ConfinedRoot confined, String processId, byte[] data) {
        long deadline = System.nanoTime() + STDIN_WRITE_TIMEOUT.toNanos();
        var hex = HexFormat.of();
        try (var connection = InitConnection.open(id, confined)) {
            int done = 0;
            while (done < data.length) {
                int len = Math.min(STDIN_FRAME_BYTES, data.length - done);
                var reply = connection.call(InitFrame.of("stdin").with("id", processId)
                        .with("data", hex.formatHex(data, done, done + len)).build());
                if (!reply.verb().equals("ok")) {
                    // ESRCH: no such running process; EPIPE: its stdin closed or never open.
                    if (reply.get("errno").filter(e -> e.equals(ESRCH) || e.equals(EPIPE)).isPresent()) throw stdinNotOpen(id);
                    throw StasisException.runtimeFailed(id.value(), "write stdin", reply.get("msg").orElse("unknown error"), null);
                }
                int taken = (int) reply.getLong("n");
                done += taken;
                if (taken < len) {
                    if (System.nanoTime() > deadline) throw stdinNotRead(id, "wrote " + done + " of " + data.length + " bytes");
                    LockSupport.parkNanos(2_000_000);
                }
            }
        }
    }

    private static StasisException stdinNotOpen(SandboxId id) {
        return new StasisException(ErrorCode.INVALID_STATE, "the process's standard input is not open (it ended, stdin was closed, "
                + "or it was started without \"stdin\": true)", Map.of("sandbox", id.value()));
    }

    private static StasisException stdinNotRead(SandboxId id, String progress) {
        return new StasisException(ErrorCode.HOST_BUSY, "the process does not read its standard input; " + progress,
                Map.of("sandbox", id.value()));
    }

    @Override
    public void closeStdin(SandboxId id, String processId) {
        initCall(id, InitFrame.of("closestdin").with("id", processId).build(), "close stdin");
    }

    @Override
    public void resizeTerminal(SandboxId id, String processId, SpawnSpec.TerminalSize size) {
        initCall(id, InitFrame.of("resize").with("id", processId).with("cols", size.cols()).with("rows", size.rows()).build(), "resize");
    }

    /**
     * The CPU time of every process of the sandbox so far, as the sandbox's own kernel counts it (its
     * cgroup {@code cpuacct.usage}, read by init), or empty where init cannot tell (an init started
     * before it could, or a kernel without that cgroup).
     */
    Optional<Duration> kernelCpu(SandboxId id) {
        var reply = ask(id, InitFrame.of("cpu").build());
        if (!reply.verb().equals("ok")) return Optional.empty();
        return reply.get("ns").map(ns -> Duration.ofNanos(Long.parseLong(ns)));
    }

    /** Sets the sandbox's hostname (stasis-init needs CAP_SYS_ADMIN in the sandbox for it: gVisor's {@link RunscRuntime} gives it). */
    void setHostname(SandboxId id, String hostname) {
        initCall(id, InitFrame.of("hostname").with("name", hostname).build(), "set the hostname");
    }

    private void initCall(SandboxId id, InitFrame request, String step) {
        var reply = ask(id, request);
        if (reply.verb().equals("ok")) return;
        if (reply.get("errno").map(e -> e.equals("3") || e.equals("22")).orElse(false))
            throw new StasisException(ErrorCode.INVALID_STATE, step + ": " + reply.get("msg").orElse("not possible now"),
                    Map.of("sandbox", id.value()));
        throw StasisException.runtimeFailed(id.value(), step, reply.get("msg").orElse("unknown error"), null);
    }

    /** One request to the sandbox's init over a connection of its own, and its reply. */
    private InitFrame ask(SandboxId id, InitFrame request) {
        try (var confined = ConfinedRoot.open(bundles.rootOf(id), rootOwner);
             var connection = InitConnection.open(id, confined)) {
            return connection.call(request);
        }
    }

    @Override
    public void forgetProcess(SandboxId id, String processId) {
        if (!Ids.isSuffix(processId)) return;
        try (var confined = ConfinedRoot.open(bundles.rootOf(id), rootOwner)) {
            RuncExecHandle.deleteFiles(confined, processId);
        }
    }

    private static StasisException spawnFailure(SandboxId id, SpawnSpec spec, InitFrame reply) {
        String stage = reply.get("stage").orElse("?");
        String message = reply.get("msg").orElse("unknown error");
        if (stage.equals("chdir"))
            return new StasisException(ErrorCode.INVALID_REQUEST, "cwd '" + spec.cwd().orElse("/root") + "': " + message,
                    Map.of("field", "cwd", "sandbox", id.value()));
        if (stage.equals("setuid"))
            return new StasisException(ErrorCode.INVALID_REQUEST, "user " + spec.user().map(Object::toString).orElse("?") + ": " + message,
                    Map.of("field", "user", "sandbox", id.value()));
        // The process's output files are on the sandbox's disk: a full one cannot take them.
        String step = "spawn (" + stage + ")";
        if (reply.get("errno").filter(EDQUOT::equals).isPresent()) return DiskFull.inSandbox(id, step, message, null);
        if (reply.get("errno").filter(ENOSPC::equals).isPresent()) return DiskFull.inPool(id, step, null);
        return StasisException.runtimeFailed(id.value(), step, message, null);
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
}
