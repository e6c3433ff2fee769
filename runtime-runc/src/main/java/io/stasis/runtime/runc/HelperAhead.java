package io.stasis.runtime.runc;

import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.host.ToolRunner;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A host helper (one of {@link HelperBinary}'s that include src/main/c/stasis-ahead.h) kept started
 * ahead of its calls: one process waits for its arguments on stdin. Starting it through the JDK
 * (its spawn helper, then the exec) took 5-30 ms on a busy host, more than the helper's own work
 * on the paths that wait for it (a files fork's reroot, a gVisor checkpoint's hold, save and
 * release). A call takes the waiting one, or starts one if none waits (the first call, or calls at
 * once), and once it is done starts the next, so the start is not beside its own work.
 *
 * <p>The waiting process uses no CPU. {@link #close} ends it, and so does the end of the service:
 * its stdin closes and it exits having done nothing. Given its arguments it runs itself again
 * with them, so its command line is the one it would have had if started with them.
 *
 * <p>This is how the service runs these helpers, {@code stasis-net}, {@code stasis-reroot} and
 * {@code stasis-sentry}; the other helpers are started by runc, runsc or CRIU, with their arguments.
 */
final class HelperAhead implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(HelperAhead.class);

    private final Path binary;
    private final AtomicReference<ToolRunner.Ahead> waiting = new AtomicReference<>();
    /** A start of the next one is under way: calls at once (a fork of 10) start one next, not one each. */
    private final AtomicBoolean starting = new AtomicBoolean();
    private volatile boolean closed;

    HelperAhead(Path binary) {
        this.binary = binary;
    }

    /**
     * Runs the helper with {@code args} for a sandbox: {@code runtime_failed} naming the step, with
     * the helper's stderr, if it fails, times out or cannot start.
     */
    void run(SandboxId id, String step, List<String> args, Duration timeout) {
        try (var helper = takeWaitingOrStart(id, step)) {
            var result = helper.run(arguments(args), timeout);
            if (result.exitCode() != 0) throw StasisException.runtimeFailed(id.value(), step, result.stderrTail(), null);
        } catch (ToolRunner.TimedOut e) {
            throw StasisException.runtimeFailed(id.value(), step, e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw StasisException.runtimeFailed(id.value(), step, "interrupted", e);
        } finally {
            startNext();
        }
    }

    /** Each argument NUL-terminated, as stasis-ahead.h reads them. */
    private static byte[] arguments(List<String> args) {
        var bytes = new ByteArrayOutputStream();
        for (String arg : args) {
            if (arg.indexOf('\0') >= 0) throw new IllegalArgumentException("a helper's argument holds a NUL: " + arg);
            bytes.writeBytes(arg.getBytes(StandardCharsets.UTF_8));
            bytes.write(0);
        }
        return bytes.toByteArray();
    }

    private ToolRunner.Ahead takeWaitingOrStart(SandboxId id, String step) {
        var helper = waiting.getAndSet(null);
        if (helper != null && helper.isAlive()) return helper;
        if (helper != null) helper.close();
        try {
            return ToolRunner.startAhead(List.of(binary.toString()));
        } catch (IOException e) {
            throw StasisException.runtimeFailed(id.value(), step, e.getMessage(), e);
        }
    }

    /**
     * Starts the helper the next call takes, off the caller's way; one already waiting stays. Not
     * {@linkplain io.stasis.core.concurrent.AheadOfDemand ahead of demand}, though it is: a tool
     * stays in the cgroup it started in, and this one's work is a call's.
     */
    private void startNext() {
        if (closed || waiting.get() != null || !starting.compareAndSet(false, true)) return;
        Thread.ofVirtual().name("helper-ahead").start(() -> {
            try {
                var next = ToolRunner.startAhead(List.of(binary.toString()));
                if (closed || !waiting.compareAndSet(null, next)) next.close();
                else if (closed) close(); // closed meanwhile: not left waiting
            } catch (IOException e) {
                log.atWarn().addKeyValue("binary", binary).setCause(e).log("starting a helper ahead failed; the next call starts its own");
            } finally {
                starting.set(false);
            }
        });
    }

    /** The process waiting for the next call, if one is: for tests. */
    OptionalLong waitingPid() {
        var helper = waiting.get();
        return helper == null ? OptionalLong.empty() : OptionalLong.of(helper.pid());
    }

    @Override
    public void close() {
        closed = true;
        var helper = waiting.getAndSet(null);
        if (helper != null) helper.close();
    }
}
