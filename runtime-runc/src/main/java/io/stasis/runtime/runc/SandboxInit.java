package io.stasis.runtime.runc;

import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.FileOwner;
import io.stasis.core.spi.SandboxRuntime.RuntimeStatus;
import io.stasis.fs.linux.ConfinedRoot;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A sandbox's stasis-init (its process 1) seen from the host: its pid, whether it runs, and
 * waiting until it answers after a start, a reroot or a restore.
 */
final class SandboxInit {
    private final Runc runc;
    private final Bundles bundles;
    private final SandboxCgroups cgroups;
    private final Freezer freezer;
    private final FileOwner rootOwner;
    private final Duration startTimeout;

    SandboxInit(Runc runc, Bundles bundles, SandboxCgroups cgroups, Freezer freezer, FileOwner rootOwner, Duration startTimeout) {
        this.runc = runc;
        this.bundles = bundles;
        this.cgroups = cgroups;
        this.freezer = freezer;
        this.rootOwner = rootOwner;
        this.startTimeout = startTimeout;
    }

    RuntimeStatus status(SandboxId id) {
        if (!runc.hasState(id)) return RuntimeStatus.UNKNOWN;
        // From the pid file and /proc, not `runc state` (a process, ~15 ms of CPU): asked for every sandbox every second
        if (running(id).isEmpty()) return RuntimeStatus.STOPPED;
        return freezer.isFrozen(cgroups.path(id)) ? RuntimeStatus.FROZEN : RuntimeStatus.RUNNING;
    }

    static long readPid(SandboxId id, Path pidFile) {
        try {
            return Long.parseLong(Files.readString(pidFile).strip());
        } catch (IOException | NumberFormatException e) {
            throw StasisException.runtimeFailed(id.value(), "start", "runc left no readable pid file at " + pidFile, e);
        }
    }

    /**
     * The host pid of the sandbox's stasis-init if it runs: the pid runc wrote when it last started
     * or restored the sandbox, if that process lives and is in the sandbox's cgroup (a pid can be
     * reused). Only without a readable pid file is {@code runc state} asked: starting runc costs
     * ~15 ms of CPU here, and a delete asked it twice.
     */
    OptionalLong running(SandboxId id) {
        long pid;
        try {
            pid = Long.parseLong(Files.readString(bundles.pidFile(id)).strip());
        } catch (IOException | NumberFormatException e) {
            return runc.state(id).filter(s -> s.running() && s.pid() > 0).map(s -> OptionalLong.of(s.pid()))
                    .orElse(OptionalLong.empty());
        }
        return HostProcesses.isAlive(pid) && HostProcesses.inCgroup(pid, cgroups.path(id)) ? OptionalLong.of(pid)
                : OptionalLong.empty();
    }

    /** The host pid of the sandbox's stasis-init, as runc reported it when it started the sandbox. */
    long pid(SandboxId id) {
        try {
            return Long.parseLong(Files.readString(bundles.pidFile(id)).strip());
        } catch (IOException | NumberFormatException e) {
            return requireContainer(id, "find init").pid();
        }
    }

    Runc.ContainerState requireContainer(SandboxId id, String step) {
        return runc.state(id).filter(Runc.ContainerState::running)
                .orElseThrow(() -> StasisException.runtimeFailed(id.value(), step, "the sandbox's processes are gone", null));
    }

    /**
     * Waits until stasis-init answers on its socket: it binds it first thing, so this is a matter
     * of a few hundred microseconds after runc returns. Polls briefly, and checks that the process
     * still lives through /proc (cheap) rather than asking runc (a process start each time). Gives
     * up at the start timeout counted from {@code startNanos}.
     */
    void awaitAnswer(SandboxId id, Path root, long initPid, long startNanos) {
        awaitAnswer(id, root, rootOwner, initPid, startNanos, startTimeout);
    }

    /**
     * {@link #awaitAnswer(SandboxId, Path, long, long)} for any runtime whose sandboxes run
     * stasis-init: {@code initPid} is the host process whose end means the sandbox's init is gone.
     */
    static void awaitAnswer(SandboxId id, Path root, FileOwner rootOwner, long initPid, long startNanos, Duration startTimeout) {
        long deadline = startNanos + startTimeout.toNanos();
        try (var confined = ConfinedRoot.open(root, rootOwner)) {
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
                    + startTimeout.toMillis() + " ms (its process " + initPid + ": " + HostProcesses.describe(initPid)
                    + (last != null ? "; the last try: " + last.getMessage() : "") + ")" + initLogTail(confined), last);
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
}
