package io.stasis.core.process;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.exec.ExecListener;
import io.stasis.core.exec.ExecService;
import io.stasis.core.exec.SandboxUsers;
import io.stasis.core.exec.ExitStatus;
import io.stasis.core.exec.KeptOutput;
import io.stasis.core.exec.OutputFeeds;
import io.stasis.core.exec.OutputKind;
import io.stasis.core.exec.OutputPump;
import io.stasis.core.exec.Signal;
import io.stasis.core.lifecycle.ActivityTracker;
import io.stasis.core.lifecycle.LifecycleService;
import io.stasis.core.lifecycle.SandboxService;
import io.stasis.core.sandbox.Ids;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.spi.ExecHandle;
import io.stasis.core.spi.ProcessEntry;
import io.stasis.core.spi.SandboxProcesses;
import io.stasis.core.spi.SpawnSpec;
import java.time.Clock;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Background processes: started and left running, found again by pid, waited for, signalled,
 * their output read from any offset or followed as it comes. Everything about a process lives
 * in its sandbox (output, exit status, the label), so it survives a restart of the service, a
 * hibernation, and is copied into forks.
 */
public final class ProcessService {
    public static final String ID_PREFIX = "prc_";

    /** Output is dropped in steps of at least this much, so that a busy process is not trimmed on every check. */
    static final long DROP_STEP = 1 << 20;

    private final SandboxService sandboxes;
    private final LifecycleService lifecycle;
    private final ActivityTracker activity;
    private final SandboxProcesses runtime;
    private final Clock clock;
    private final int keepExited;
    private final SandboxUsers users;
    private final OutputFeeds feeds = new OutputFeeds();

    /** @param keepExited how many ended processes a sandbox keeps (with their output) before the oldest are forgotten */
    public ProcessService(SandboxService sandboxes, LifecycleService lifecycle, ActivityTracker activity, SandboxProcesses runtime,
                          Clock clock, int keepExited, SandboxUsers users) {
        this.users = users;
        this.sandboxes = sandboxes;
        this.lifecycle = lifecycle;
        this.activity = activity;
        this.runtime = runtime;
        this.clock = clock;
        this.keepExited = keepExited;
    }

    public ProcessInfo start(String sandboxRef, ProcessRequest request) {
        var sandbox = sandboxes.get(sandboxRef);
        String processId = Ids.randomSuffix();
        var now = clock.instant();
        boolean stdinOpen = request.stdin() || request.terminal().isPresent();
        var label = new ProcessLabel(request.cmd(), request.cwd(), request.tag(), now, request.keepAlive(),
                request.keepAliveFor().map(now::plus), stdinOpen, request.terminal().isPresent());
        long pid = lifecycle.withRunning(sandbox.id(), "start a process", s -> {
            var as = users.runAs(sandboxes, s, request.user(), request.cwd());
            var env = ExecService.environment(s, as.user(), request.env());
            if (request.terminal().isPresent()) env.putIfAbsent("TERM", "xterm-256color");
            return runtime.startProcess(s.id(), processId, new SpawnSpec(request.cmd(), as.cwd(),
                    env, Optional.empty(), request.stdin(), request.terminal(), as.ids()), label.encode());
        });
        return new ProcessInfo(ID_PREFIX + processId, pid, request.cmd(), request.cwd(), request.tag(), now, "running",
                Optional.empty(), request.keepAlive(), label.keepAliveUntil(), 0, 0, stdinOpen, request.terminal().isPresent());
    }

    /** Running and recently ended processes, oldest first. Ended ones beyond the kept number are forgotten. */
    public List<ProcessInfo> list(String sandboxRef) {
        var sandbox = usable(sandboxRef);
        var all = entries(sandbox.id());
        var ended = all.stream().filter(p -> !p.running()).toList();
        for (int i = 0; i < ended.size() - keepExited; i++) runtime.forgetProcess(sandbox.id(), bare(ended.get(i).id()));
        return all.stream().filter(p -> p.running() || ended.indexOf(p) >= ended.size() - keepExited).toList();
    }

    public ProcessInfo get(String sandboxRef, long pid) {
        var sandbox = usable(sandboxRef);
        return find(sandbox.id(), pid);
    }

    /** Waits up to {@code timeout} for the process to end; returns it as it is then. */
    public ProcessInfo await(String sandboxRef, long pid, Duration timeout) {
        var sandbox = usable(sandboxRef);
        var process = find(sandbox.id(), pid);
        if (!process.running()) return process;
        try (var handle = runtime.attach(sandbox.id(), bare(process.id())); var waiting = activity.attach(sandbox.id())) {
            handle.awaitExit(timeout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return find(sandbox.id(), pid);
    }

    /** Output written so far from the given offsets, at most {@code maxBytes} of each. */
    public Output output(String sandboxRef, long pid, long stdoutOffset, long stderrOffset, int maxBytes) {
        if (stdoutOffset < 0 || stderrOffset < 0) throw StasisException.invalid("offset", "must not be negative");
        var sandbox = usable(sandboxRef);
        var process = find(sandbox.id(), pid);
        try (var handle = runtime.attach(sandbox.id(), bare(process.id()))) {
            var out = KeptOutput.read(handle, OutputKind.STDOUT, stdoutOffset, maxBytes);
            var err = KeptOutput.read(handle, OutputKind.STDERR, stderrOffset, maxBytes);
            return new Output(process, out.start(), out.data(), out.start() + out.data().length,
                    err.start(), err.data(), err.start() + err.data().length);
        }
    }

    /**
     * A slice of a process's output, and where the next read starts.
     *
     * @param stdoutStart where {@code stdout} begins: the offset asked for, or later when the output
     *                    before it was dropped to bound its size
     */
    public record Output(ProcessInfo process, long stdoutStart, byte[] stdout, long stdoutOffset,
                         long stderrStart, byte[] stderr, long stderrOffset) {
    }

    /**
     * Bounds the output kept for each process of a running sandbox to about {@code keepBytes} per
     * stream, dropping the oldest; offsets stay valid, and readers from a dropped offset are told.
     *
     * @return the bytes dropped
     */
    public long boundOutput(SandboxId id, long keepBytes) {
        long dropped = 0;
        for (var entry : runtime.processes(id)) {
            if (entry.stdoutBytes() <= keepBytes + DROP_STEP && entry.stderrBytes() <= keepBytes + DROP_STEP) continue;
            try (var handle = runtime.attach(id, entry.processId())) {
                dropped += drop(handle, OutputKind.STDOUT, entry.stdoutBytes(), keepBytes);
                dropped += drop(handle, OutputKind.STDERR, entry.stderrBytes(), keepBytes);
            }
        }
        return dropped;
    }

    private static long drop(ExecHandle handle, OutputKind kind, long size, long keepBytes) {
        long before = handle.keptFrom(kind);
        if (size - before <= keepBytes + DROP_STEP) return 0;
        return handle.dropBefore(kind, size - keepBytes) - before;
    }

    /**
     * Passes the process's output to {@code listener} from the given offsets as it is written,
     * until the process ends (returns its exit) or the listener leaves. Holds the sandbox awake.
     * Every follower of a process shares one reader of its output (see {@link OutputFeeds}).
     */
    public Optional<ExitStatus> follow(String sandboxRef, long pid, long stdoutOffset, long stderrOffset, ExecListener listener)
            throws InterruptedException {
        var sandbox = usable(sandboxRef);
        var process = find(sandbox.id(), pid);
        String processId = bare(process.id());
        try (var handle = runtime.attach(sandbox.id(), processId); var waiting = activity.attach(sandbox.id())) {
            if (!process.running()) {
                new OutputPump(handle, listener, 0, stdoutOffset, stderrOffset).drainAll();
                return process.exit();
            }
            var source = new OutputFeeds.Source(new FeedKey(sandbox.id(), processId), () -> runtime.attach(sandbox.id(), processId),
                    () -> sandboxGone(sandbox.id()));
            return feeds.follow(source, handle, listener, stdoutOffset, stderrOffset);
        }
    }

    private record FeedKey(SandboxId sandbox, String processId) {
    }

    /**
     * Whether a sandbox was deleted or stopped: its processes then never write an exit, and a
     * follower would hold the deleted root open for ever.
     */
    private boolean sandboxGone(SandboxId id) {
        try {
            var state = sandboxes.get(id.value()).state();
            return state instanceof SandboxState.Stopped || state instanceof SandboxState.Deleted;
        } catch (StasisException e) {
            return true; // gone from the catalog
        }
    }

    /** Sends a signal to the process (not to what it started). */
    public ProcessInfo signal(String sandboxRef, long pid, Signal signal) {
        var sandbox = sandboxes.get(sandboxRef);
        return lifecycle.withRunning(sandbox.id(), "signal a process", s -> {
            var process = find(s.id(), pid);
            if (!process.running())
                throw new StasisException(ErrorCode.INVALID_STATE, "process " + pid + " has already ended", Map.of("pid", pid, "sandbox", s.id().value()));
            runtime.signal(s.id(), pid, signal.number());
            return process;
        });
    }

    /** Writes to the process's standard input (started with stdin open, or on a terminal). */
    public ProcessInfo writeStdin(String sandboxRef, long pid, byte[] data) {
        var sandbox = sandboxes.get(sandboxRef);
        return lifecycle.withRunning(sandbox.id(), "write to a process", s -> {
            var process = running(s.id(), pid);
            runtime.writeStdin(s.id(), bare(process.id()), data);
            return process;
        });
    }

    /** Closes the process's standard input: it reads end of file (a terminal gets the end-of-file character). */
    public ProcessInfo closeStdin(String sandboxRef, long pid) {
        var sandbox = sandboxes.get(sandboxRef);
        return lifecycle.withRunning(sandbox.id(), "close a process's stdin", s -> {
            var process = running(s.id(), pid);
            runtime.closeStdin(s.id(), bare(process.id()));
            return process;
        });
    }

    /** Changes the window size of the process's terminal. */
    public ProcessInfo resize(String sandboxRef, long pid, SpawnSpec.TerminalSize size) {
        var sandbox = sandboxes.get(sandboxRef);
        return lifecycle.withRunning(sandbox.id(), "resize a terminal", s -> {
            var process = running(s.id(), pid);
            if (!process.terminal())
                throw new StasisException(ErrorCode.INVALID_STATE, "process " + pid + " has no terminal", Map.of("pid", pid));
            runtime.resizeTerminal(s.id(), bare(process.id()), size);
            return process;
        });
    }

    private ProcessInfo running(SandboxId id, long pid) {
        var process = find(id, pid);
        if (!process.running())
            throw new StasisException(ErrorCode.INVALID_STATE, "process " + pid + " has already ended", Map.of("pid", pid, "sandbox", id.value()));
        if (!process.stdin())
            throw new StasisException(ErrorCode.INVALID_STATE, "process " + pid + " was started without \"stdin\": true", Map.of("pid", pid));
        return process;
    }

    /** Forgets an ended process and its output. */
    public void forget(String sandboxRef, long pid) {
        var sandbox = usable(sandboxRef);
        var process = find(sandbox.id(), pid);
        if (process.running())
            throw new StasisException(ErrorCode.INVALID_STATE, "process " + pid + " is still running; signal it first", Map.of("pid", pid));
        runtime.forgetProcess(sandbox.id(), bare(process.id()));
    }

    /** Whether a running process started with keepAlive holds the sandbox awake (for the idle policy). */
    public boolean keepsAwake(SandboxId id) {
        var now = clock.instant();
        return entries(id).stream().anyMatch(p -> p.keepsAwake(now));
    }

    private List<ProcessInfo> entries(SandboxId id) {
        return runtime.processes(id).stream().map(ProcessService::info).sorted(Comparator.comparing(ProcessInfo::startedAt)).toList();
    }

    private ProcessInfo find(SandboxId id, long pid) {
        // A pid can come back after a restart; the newest process with it is the one meant.
        return entries(id).stream().filter(p -> p.pid() == pid).reduce((a, b) -> b)
                .orElseThrow(() -> new StasisException(ErrorCode.PROCESS_NOT_FOUND, "no process " + pid + " in sandbox " + id,
                        Map.of("pid", pid, "sandbox", id.value())));
    }

    private static ProcessInfo info(ProcessEntry entry) {
        var label = ProcessLabel.decode(entry.label());
        String status = entry.exit().isPresent() ? "exited" : entry.lost() ? "lost" : "running";
        return new ProcessInfo(ID_PREFIX + entry.processId(), entry.pid(), label.cmd(), label.cwd(), label.tag(), label.startedAt(),
                status, entry.exit(), label.keepAlive(), label.keepAliveUntil(), entry.stdoutBytes(), entry.stderrBytes(),
                label.stdin(), label.terminal());
    }

    private static String bare(String id) {
        return id.substring(ID_PREFIX.length());
    }

    /**
     * A sandbox whose processes' files can be read: a paused, standby or hibernated one is resumed first
     * (auto-resume); a stopped one is read as it is (its processes are lost).
     */
    private Sandbox usable(String sandboxRef) {
        var sandbox = sandboxes.get(sandboxRef);
        activity.touch(sandbox.id());
        if (sandbox.state().asleep())
            return lifecycle.withRunning(sandbox.id(), "read processes", s -> s);
        return sandbox;
    }
}
