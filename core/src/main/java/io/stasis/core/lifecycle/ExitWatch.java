package io.stasis.core.lifecycle;

import io.stasis.core.concurrent.Periodic;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.spi.SandboxCatalog;
import io.stasis.core.spi.SandboxRuntime;
import io.stasis.core.spi.SandboxRuntime.RuntimeStatus;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Notices, once per tick, a sandbox whose processes ended without being asked (its process 1
 * exited: {@code kill 1} inside, a crash, the host's out-of-memory killer) and has it stopped with
 * the reason ({@link SandboxService#markExited}): its state and a lifecycle event say so at once,
 * not at the next call that finds it dead.
 */
public final class ExitWatch implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ExitWatch.class);

    private final SandboxCatalog catalog;
    private final SandboxRuntime runtime;
    private final SandboxService sandboxes;
    private final Duration tick;
    private Periodic passes;

    public ExitWatch(SandboxCatalog catalog, SandboxRuntime runtime, SandboxService sandboxes, Duration tick) {
        this.catalog = catalog;
        this.runtime = runtime;
        this.sandboxes = sandboxes;
        this.tick = tick;
    }

    public ExitWatch start() {
        passes = Periodic.start("exit-watch", tick, Duration.ofSeconds(5), this::checkAll);
        return this;
    }

    /**
     * One pass (also called directly by tests). Only a sandbox recorded with processes whose runtime
     * says they ended; one in the middle of an operation (a hibernation whose dump ended it) is
     * looked at again under its lock by {@code markExited}, after the operation recorded its state.
     */
    public void checkAll() {
        for (var sandbox : catalog.all()) {
            if (!sandbox.state().hasProcesses() || sandbox.state() instanceof SandboxState.Deleted) continue;
            try {
                if (runtime.status(sandbox.id()) == RuntimeStatus.STOPPED) sandboxes.markExited(sandbox.id());
            } catch (RuntimeException e) {
                log.atDebug().addKeyValue("sandbox", sandbox.id()).setCause(e).log("could not check whether the sandbox ended");
            }
        }
    }

    @Override
    public void close() {
        if (passes != null) passes.close();
    }
}
