package io.stasis.core.exec;

import io.stasis.core.error.StasisException;
import io.stasis.core.lifecycle.ActivityTracker;
import io.stasis.core.lifecycle.LifecycleService;
import io.stasis.core.lifecycle.SandboxService;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.spi.ExecHandle;
import io.stasis.core.spi.SandboxRuntime;
import io.stasis.core.spi.SandboxRuntime.RuntimeStatus;
import io.stasis.core.spi.SpawnSpec;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Runs a command in a sandbox and waits for it: the {@code exec} call. */
public final class ExecService {
    private static final Logger log = LoggerFactory.getLogger(ExecService.class);
    /** What every command's environment starts with. */
    public static final Map<String, String> DEFAULT_ENV = Map.of(
            "PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "HOME", "/root",
            "LANG", "C.UTF-8");
    private static final Duration KILL_GRACE = Duration.ofSeconds(10);

    private final SandboxService sandboxes;
    private final LifecycleService lifecycle;
    private final ActivityTracker activity;
    private final SandboxRuntime runtime;
    private final long outputLimit;
    private final SandboxUsers users;

    /** @param outputLimit most bytes of each output kept for the result; more is dropped and flagged */
    public ExecService(SandboxService sandboxes, LifecycleService lifecycle, ActivityTracker activity, SandboxRuntime runtime,
                       long outputLimit, SandboxUsers users) {
        this.users = users;
        this.sandboxes = sandboxes;
        this.lifecycle = lifecycle;
        this.activity = activity;
        this.runtime = runtime;
        this.outputLimit = outputLimit;
    }

    public ExecResult exec(String sandboxRef, ExecRequest request) {
        return exec(sandboxRef, request, ExecListener.NONE);
    }

    /**
     * Runs the command, passing output to {@code listener} as it comes when it is not
     * {@link ExecListener#NONE}, and returns when the command's first process has ended. On timeout
     * the whole process tree is killed and the result says {@code timedOut}.
     */
    public ExecResult exec(String sandboxRef, ExecRequest request, ExecListener listener) {
        Sandbox sandbox = sandboxes.get(sandboxRef);
        long start = System.nanoTime();
        ExecHandle handle;
        try {
            // Auto-resume: a paused or hibernated sandbox is woken first.
            handle = lifecycle.withRunning(sandbox.id(), "exec", s -> {
                var as = users.runAs(sandboxes, s, request.user(), request.cwd());
                return runtime.spawn(s.id(), new SpawnSpec(request.cmd(), as.cwd(), environment(s, as.user(), request.env()), request.stdin())
                        .as(as.ids()));
            });
        } catch (StasisException e) {
            var status = runtime.status(sandbox.id());
            if (status != RuntimeStatus.RUNNING && status != RuntimeStatus.FROZEN) {
                // Its processes are gone: a running sandbox whose init died is stopped now. One that is
                // still hibernated (its auto-resume failed) is not, and the caller gets that failure.
                sandboxes.markExited(sandbox.id());
                if (sandboxes.get(sandbox.id().value()).state() instanceof SandboxState.Stopped)
                    throw StasisException.invalidState(sandbox.id().value(), "stopped", "exec");
            }
            throw e;
        }
        try (handle; var waiting = activity.attach(sandbox.id())) {
            var pump = new OutputPump(handle, listener, outputLimit, 0, 0);
            Optional<ExitStatus> exit = Optional.empty();
            try {
                exit = pump.run(start + request.timeout().toNanos());
            } catch (RuntimeException e) {
                // The listener failed or left (a streaming client went away): nobody waits for this command any more.
                handle.killTree();
                throw e;
            }
            boolean timedOut = exit.isEmpty();
            if (timedOut) {
                handle.killTree();
                exit = Optional.of(handle.awaitExit(KILL_GRACE).orElse(ExitStatus.killed(Signal.KILL.number())));
            }
            pump.drainAll();
            var out = pump.stdoutBuffer();
            var err = pump.stderrBuffer();
            var took = Duration.ofNanos(System.nanoTime() - start);
            log.atDebug().addKeyValue("sandbox", sandbox.id()).addKeyValue("cmd", request.cmd().getFirst())
                    .addKeyValue("exitCode", exit.get().exitCode()).addKeyValue("timedOut", timedOut)
                    .addKeyValue("ms", took.toMillis()).log("exec finished");
            return new ExecResult(exit.get(), out.bytes(), err.bytes(), out.truncated(), err.truncated(), timedOut, took);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            handle.killTree();
            throw StasisException.runtimeFailed(sandbox.id().value(), "exec", "interrupted", e);
        }
    }

    /** The environment of a command: the defaults, the sandbox's own, then the call's. */
    public static Map<String, String> environment(Sandbox sandbox, Map<String, String> extra) {
        return environment(sandbox, Optional.empty(), extra);
    }

    /** The environment of a command run as {@code user}: its HOME, USER and LOGNAME among the defaults. */
    public static Map<String, String> environment(Sandbox sandbox, Optional<SandboxUsers.Resolved> user, Map<String, String> extra) {
        var env = new LinkedHashMap<>(DEFAULT_ENV);
        user.filter(u -> !u.isRoot()).ifPresent(u -> {
            env.put("HOME", u.home());
            env.put("USER", u.name());
            env.put("LOGNAME", u.name());
        });
        env.put("HOSTNAME", sandbox.id().hostname());
        env.putAll(sandbox.env());
        env.putAll(extra);
        return env;
    }
}
