package io.stasis.runtime.runc;

import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

/**
 * The service's connections to each sandbox's stasis-init that outlive a call (those of exec
 * handles), and letting go of them before a freeze or a dump.
 */
final class InitConnections {
    private static final Duration QUIESCE_TIMEOUT = Duration.ofSeconds(5);

    private final Map<SandboxId, Set<InitConnection>> open = new ConcurrentHashMap<>();

    /** Keeps note of an open connection; the returned action forgets it (when its handle closes it). */
    Runnable track(SandboxId id, InitConnection connection) {
        var tracked = open.computeIfAbsent(id, k -> ConcurrentHashMap.newKeySet());
        tracked.add(connection);
        return () -> tracked.remove(connection);
    }

    boolean anyOpen(SandboxId id) {
        return open.containsKey(id);
    }

    /** Forgets the sandbox's connections: its init is gone. */
    void forget(SandboxId id) {
        open.remove(id);
    }

    /** Closes the service's connections to the sandbox's init (its exec handles then watch the exit files). */
    void closeAll(SandboxId id) {
        var connections = open.remove(id);
        if (connections != null) connections.forEach(InitConnection::close);
    }

    /** Closes the service's connections to the sandbox's init and waits until init has closed its ends. */
    void quiesce(SandboxId id, long initPid) {
        closeAll(id);
        long deadline = System.nanoTime() + QUIESCE_TIMEOUT.toNanos();
        long pause = 50_000;
        while (HostProcesses.socketCount(initPid) > 1) {
            if (System.nanoTime() > deadline)
                throw StasisException.runtimeFailed(id.value(), "checkpoint", "stasis-init still holds connections from the service", null);
            LockSupport.parkNanos(pause);
            pause = Math.min(pause * 2, 2_000_000);
        }
    }
}
