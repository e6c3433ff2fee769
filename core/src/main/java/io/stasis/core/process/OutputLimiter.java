package io.stasis.core.process;

import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.spi.SandboxCatalog;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the output of background processes bounded: every tick, for each running sandbox, the
 * oldest output beyond {@code keepBytes} per stream is dropped (see {@link ProcessService#boundOutput}).
 * Processes write their output files directly, so the bound is enforced after the fact: between
 * ticks a stream can exceed it by what the process writes in one tick.
 */
public final class OutputLimiter implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(OutputLimiter.class);

    private final SandboxCatalog catalog;
    private final ProcessService processes;
    private final long keepBytes;
    private final Duration tick;
    private volatile Thread thread;
    private volatile boolean closed;

    public OutputLimiter(SandboxCatalog catalog, ProcessService processes, long keepBytes, Duration tick) {
        if (keepBytes < 0) throw new IllegalArgumentException("keepBytes must not be negative");
        this.catalog = catalog;
        this.processes = processes;
        this.keepBytes = keepBytes;
        this.tick = tick;
    }

    public void start() {
        thread = Thread.ofVirtual().name("output-limiter").start(() -> {
            while (!closed) {
                try {
                    Thread.sleep(tick);
                    boundAll();
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
    }

    /** One pass over every running sandbox (also called directly by tests). */
    public void boundAll() {
        for (var sandbox : catalog.all()) {
            if (closed) return;
            if (!(sandbox.state() instanceof SandboxState.Running)) continue;
            try {
                long dropped = processes.boundOutput(sandbox.id(), keepBytes);
                if (dropped > 0)
                    log.atDebug().addKeyValue("sandbox", sandbox.id()).addKeyValue("bytes", dropped).log("dropped old process output");
            } catch (RuntimeException e) {
                // it may have stopped or gone meanwhile; the next tick sees it as it is then
                log.atDebug().addKeyValue("sandbox", sandbox.id()).setCause(e).log("could not bound process output");
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        var running = thread;
        if (running != null) running.interrupt();
    }
}
