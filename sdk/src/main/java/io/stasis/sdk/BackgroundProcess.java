package io.stasis.sdk;

import com.fasterxml.jackson.annotation.JsonValue;
import java.net.http.HttpRequest.BodyPublishers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;

/**
 * A background process in a sandbox: a handle holding the latest description the server gave
 * ({@link #info()}, updated by every call that returns one), with the calls that act on it.
 * Thread-safe.
 *
 * <pre>{@code
 * BackgroundProcess p = sandbox.processes().start(ProcessRequest.builder("sh", "-c", "make test").build());
 * ProcessInfo end = p.follow(ExecOutputListener.writingTo(System.out, System.err)); // resumes after drops
 * System.out.println("exit " + end.exitCode());
 *
 * BackgroundProcess shell = sandbox.processes().start(ProcessRequest.builder("sh").stdin(true).build());
 * shell.sendStdin("echo hi; exit 3\n");
 * shell.waitFor(Duration.ofSeconds(10));
 * System.out.println(shell.output().stdout());   // "hi\n"
 * }</pre>
 */
public final class BackgroundProcess {
    /** The longest single wait asked of the server; longer waits are a series of them. */
    static final Duration LONGEST_WAIT_CALL = Duration.ofMinutes(5);
    private static final String OCTETS = "application/octet-stream";

    private final SandboxCalls calls;
    private final String path;
    private volatile ProcessInfo info;

    BackgroundProcess(SandboxCalls calls, ProcessInfo info) {
        this.calls = calls;
        this.info = Objects.requireNonNull(info, "info");
        this.path = pathOf(calls, info.pid());
    }

    static ProcessInfo fetch(SandboxCalls calls, long pid) {
        var transport = calls.transport();
        return transport.json(transport.call("GET", pathOf(calls, pid)), ProcessInfo.class);
    }

    private static String pathOf(SandboxCalls calls, long pid) {
        if (pid < 1) throw new IllegalArgumentException("a pid is a positive integer, was " + pid);
        return calls.path("/processes/" + pid);
    }

    /** The latest description. */
    @JsonValue
    public ProcessInfo info() {
        return info;
    }

    /** Its pid as the sandbox sees it. */
    public long pid() {
        return info.pid();
    }

    /** {@code prc_...} */
    public String id() {
        return info.id();
    }

    /** The sandbox it runs in, by the id or name it was reached with. */
    public String sandbox() {
        return calls.idOrName();
    }

    /** Fetches the current description. @throws NotFoundException {@code process_not_found} once forgotten */
    public ProcessInfo refresh() {
        return update(fetch(calls, info.pid()));
    }

    /**
     * Waits until the process ends, at most {@code timeout} (null: as long as it takes), and
     * returns it as it then is: {@link ProcessInfo#hasEnded()} says which.
     */
    public ProcessInfo waitFor(Duration timeout) {
        if (timeout != null && timeout.isNegative()) throw new IllegalArgumentException("timeout is negative: " + timeout);
        long deadline = timeout == null ? 0 : System.nanoTime() + timeout.toNanos();
        Duration left = timeout == null ? LONGEST_WAIT_CALL : timeout;
        var transport = calls.transport();
        while (true) {
            Duration wait = left.compareTo(LONGEST_WAIT_CALL) < 0 ? left : LONGEST_WAIT_CALL;
            Duration slack = transport.requestTimeout();
            var call = transport.call("GET", path + "/wait").query(Query.of().add("timeoutMs", wait.toMillis()))
                    .timeout(slack == null ? null : wait.plus(slack));
            ProcessInfo now = update(transport.json(call, ProcessInfo.class));
            if (now.hasEnded()) return now;
            if (timeout != null) {
                left = Duration.ofNanos(deadline - System.nanoTime());
                if (left.isNegative() || left.isZero()) return now;
            }
        }
    }

    /** All output from the start, or its first MiB of each stream; see {@link #output(long, long)}. */
    public ProcessOutput output() {
        return output(0, 0);
    }

    /** What it wrote from these offsets (at most 1 MiB of each stream) and where to continue. */
    public ProcessOutput output(long stdoutOffset, long stderrOffset) {
        if (stdoutOffset < 0 || stderrOffset < 0) throw new IllegalArgumentException("offsets are never negative");
        var transport = calls.transport();
        var query = Query.of().add("offset", stdoutOffset).add("stderrOffset", stderrOffset);
        var output = ProcessOutput.from(transport.json(transport.call("GET", path + "/output").query(query),
                ProcessWire.Output.class));
        if (output.process() != null) update(output.process());
        return output;
    }

    /**
     * Hands the output to {@code listener} from the start, then as it comes, and returns the
     * process once it has ended. Called on this thread, one chunk at a time; a dropped connection
     * is resumed where it was, so each byte arrives exactly once. An exception from the listener
     * ends the following and is rethrown here.
     *
     * @throws StasisConnectionException when the connection could not be restored (for a minute)
     */
    public ProcessInfo follow(ExecOutputListener listener) {
        return follow(listener, 0, 0);
    }

    /** As {@link #follow(ExecOutputListener)}, from these offsets (e.g. of a previous {@link #output()}). */
    public ProcessInfo follow(ExecOutputListener listener, long stdoutOffset, long stderrOffset) {
        ExecWire.Exit exit = followOutput(listener, stdoutOffset, stderrOffset);
        try {
            return refresh();
        } catch (NotFoundException forgotten) {
            return update(info.exited(exit.exitCode(), exit.signal()));
        }
    }

    /**
     * As {@link #follow(ExecOutputListener, long, long)}, one call fewer: the answer is this
     * handle's description marked ended with the exit the output stream reported, without asking
     * the server for the process again (its byte counts are the ones this handle had).
     */
    public ProcessInfo followToEnd(ExecOutputListener listener, long stdoutOffset, long stderrOffset) {
        ExecWire.Exit exit = followOutput(listener, stdoutOffset, stderrOffset);
        return update(info.exited(exit.exitCode(), exit.signal()));
    }

    /**
     * As {@link #follow(ExecOutputListener)}, without blocking: the output goes to {@code listener}
     * on the subscription's own thread while the caller goes on; its {@link OutputSubscription#exit()}
     * completes with the process once it has ended. Close it to stop following (the process goes on).
     */
    public OutputSubscription subscribe(ExecOutputListener listener) {
        return subscribe(listener, 0, 0);
    }

    /** As {@link #subscribe(ExecOutputListener)}, from these offsets (e.g. of a previous {@link #output()}). */
    public OutputSubscription subscribe(ExecOutputListener listener, long stdoutOffset, long stderrOffset) {
        Objects.requireNonNull(listener, "listener");
        return OutputSubscription.start(this, calls.transport(), path + "/output", listener, stdoutOffset, stderrOffset);
    }

    /** This handle marked ended as the output stream reported (what a subscription completes with). */
    ProcessInfo ended(ExecWire.Exit exit) {
        return update(info.exited(exit.exitCode(), exit.signal()));
    }

    private ExecWire.Exit followOutput(ExecOutputListener listener, long stdoutOffset, long stderrOffset) {
        Objects.requireNonNull(listener, "listener");
        return new ProcessOutputFollower(calls.transport(), path + "/output", listener, Reconnects.withDefaults(), stdoutOffset,
                stderrOffset).follow();
    }

    /**
     * Writes to its standard input, in order with earlier writes.
     *
     * @throws ConflictException           {@code invalid_state} without {@code stdin}/{@code pty}, or once ended
     * @throws ServiceUnavailableException {@code host_busy} when it does not read them within 30 s
     */
    public ProcessInfo sendStdin(byte[] bytes) {
        var transport = calls.transport();
        var call = transport.call("POST", path + "/stdin").body(BodyPublishers.ofByteArray(bytes.clone()), OCTETS);
        return update(transport.json(call, ProcessInfo.class));
    }

    /** Writes text as UTF-8 to its standard input. */
    public ProcessInfo sendStdin(String text) {
        return sendStdin(text.getBytes(StandardCharsets.UTF_8));
    }

    /** End of file once it has read what was sent (on a terminal: Ctrl-D). */
    public ProcessInfo closeStdin() {
        return post("/stdin/close");
    }

    /**
     * Sends a signal by name: {@code TERM}, {@code KILL}, {@code INT}, {@code HUP}...
     *
     * @throws ConflictException       {@code invalid_state} once it has ended
     * @throws InvalidRequestException an unknown signal
     */
    public ProcessInfo signal(String name) {
        var transport = calls.transport();
        var call = transport.jsonCall("POST", path + "/signal", new ProcessWire.Signal(Objects.requireNonNull(name, "name")));
        return update(transport.json(call, ProcessInfo.class));
    }

    /** Resizes its terminal; its foreground job gets SIGWINCH. @throws ConflictException without a terminal */
    public ProcessInfo resize(int cols, int rows) {
        var transport = calls.transport();
        var call = transport.jsonCall("POST", path + "/resize", new TerminalSize(cols, rows));
        return update(transport.json(call, ProcessInfo.class));
    }

    /** Forgets an ended process and its output. @throws ConflictException while it runs */
    public void forget() {
        var transport = calls.transport();
        transport.discard(transport.call("DELETE", path));
    }

    private ProcessInfo post(String suffix) {
        var transport = calls.transport();
        return update(transport.json(transport.call("POST", path + suffix), ProcessInfo.class));
    }

    private ProcessInfo update(ProcessInfo fresh) {
        info = fresh;
        return fresh;
    }

    @Override
    public String toString() {
        ProcessInfo now = info;
        return "BackgroundProcess[" + now.pid() + " " + String.join(" ", now.cmd()) + ", " + now.status() + "]";
    }
}
