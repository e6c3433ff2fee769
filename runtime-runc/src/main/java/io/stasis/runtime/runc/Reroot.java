package io.stasis.runtime.runc;

import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.host.ToolRunner;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The only class that runs {@code stasis-reroot} (src/main/c/stasis-reroot.c): a new root for a
 * running sandbox, the step of a fork into a warm sandbox that the fork waits on.
 *
 * <p>One helper is kept started ahead, waiting for its arguments on stdin: a process start (5-30 ms
 * on a busy host, through the JDK's spawn helper) was most of the step, the helper's own work a few
 * ms. A call takes the waiting one (or starts one if there is none: the first call, or calls at
 * once) and starts the next one after it. The waiting helper uses no CPU; {@link #close} ends it,
 * and so does the end of the service (its stdin closes: it exits having done nothing).
 */
final class Reroot implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Reroot.class);

    private final Path binary;
    private final Duration timeout;
    private final AtomicReference<ToolRunner.Ahead> waiting = new AtomicReference<>();
    private volatile boolean closed;

    private Reroot(Path binary, Duration timeout) {
        this.binary = binary;
        this.timeout = timeout;
    }

    static Reroot install(Path binDir, Duration timeout) {
        return new Reroot(HelperBinary.install(binDir, HelperBinary.REROOT), timeout);
    }

    /** Moves the sandbox whose process 1 has host pid {@code initPid} onto {@code newRoot}; its init then binds its socket there. */
    void run(SandboxId id, long initPid, Path newRoot) {
        try (var helper = takeWaitingOrStart(id)) {
            byte[] arguments = (initPid + "\0" + newRoot + "\0").getBytes(StandardCharsets.UTF_8);
            var result = helper.run(arguments, timeout);
            if (result.exitCode() != 0) throw StasisException.runtimeFailed(id.value(), "reroot", result.stderrTail(), null);
        } catch (ToolRunner.TimedOut e) {
            throw StasisException.runtimeFailed(id.value(), "reroot", e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw StasisException.runtimeFailed(id.value(), "reroot", "interrupted", e);
        } finally {
            startNext(); // after this one's work, not beside it
        }
    }

    private ToolRunner.Ahead takeWaitingOrStart(SandboxId id) {
        var helper = waiting.getAndSet(null);
        if (helper != null && helper.isAlive()) return helper;
        if (helper != null) helper.close();
        try {
            return ToolRunner.startAhead(List.of(binary.toString()));
        } catch (IOException e) {
            throw StasisException.runtimeFailed(id.value(), "reroot", e.getMessage(), e);
        }
    }

    /**
     * Starts the helper the next call takes, off the caller's way; one already waiting stays. Not
     * {@linkplain io.stasis.core.concurrent.AheadOfDemand ahead of demand}, though it is: a tool
     * stays in the cgroup it started in, and this one's work is a call's.
     */
    private void startNext() {
        if (closed || waiting.get() != null) return;
        Thread.ofVirtual().name("reroot-ahead").start(() -> {
            try {
                var next = ToolRunner.startAhead(List.of(binary.toString()));
                if (closed || !waiting.compareAndSet(null, next)) next.close();
                else if (closed) close(); // closed meanwhile: not left waiting
            } catch (IOException e) {
                log.atWarn().addKeyValue("binary", binary).setCause(e).log("starting a reroot helper ahead failed; the next reroot starts its own");
            }
        });
    }

    @Override
    public void close() {
        closed = true;
        var helper = waiting.getAndSet(null);
        if (helper != null) helper.close();
    }
}
