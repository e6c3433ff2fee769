package io.stasis.core.lifecycle;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.policy.IdlePolicy;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.spi.SandboxCatalog;
import io.stasis.core.spi.SandboxMeters;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies each sandbox's idle policy, once per tick. A sandbox is idle when no API call touched it,
 * nothing is attached to it (a stream, a command being waited for) and its processes used less
 * than {@code busyCpu} of one core over the tick: an agent's long build is not idle, a forgotten
 * shell is. Busy ticks count as activity.
 */
public final class IdleMonitor implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(IdleMonitor.class);

    private final SandboxCatalog catalog;
    private final SandboxMeters runtime;
    private final LifecycleService lifecycle;
    private final SandboxService sandboxes;
    private final ActivityTracker activity;
    private final Clock clock;
    private final Duration tick;
    private final double busyCpu;
    private final Predicate<SandboxId> keptAwake;
    private final Map<SandboxId, Duration> lastCpu = new ConcurrentHashMap<>();
    /** Sandboxes whose age limit's hibernation was refused: in standby instead until they wake, not dumped again every tick. */
    private final Set<SandboxId> ttlHibernationRefused = ConcurrentHashMap.newKeySet();
    private volatile Thread thread;
    private volatile boolean closed;

    /**
     * @param tick      how often policies are checked
     * @param busyCpu   share of one core above which a sandbox counts as busy (e.g. 0.02)
     * @param keptAwake whether something the monitor cannot see keeps a running sandbox awake (keepAlive processes)
     */
    public IdleMonitor(SandboxCatalog catalog, SandboxMeters runtime, LifecycleService lifecycle, SandboxService sandboxes,
                       ActivityTracker activity, Clock clock, Duration tick, double busyCpu,
                       Predicate<SandboxId> keptAwake) {
        this.keptAwake = keptAwake;
        this.catalog = catalog;
        this.runtime = runtime;
        this.lifecycle = lifecycle;
        this.sandboxes = sandboxes;
        this.activity = activity;
        this.clock = clock;
        this.tick = tick;
        this.busyCpu = busyCpu;
    }

    public void start() {
        thread = Thread.ofVirtual().name("idle-monitor").start(() -> {
            while (!closed) {
                try {
                    Thread.sleep(tick);
                    checkAll();
                } catch (InterruptedException e) {
                    return;
                } catch (RuntimeException e) {
                    log.atWarn().setCause(e).log("idle check failed");
                }
            }
        });
    }

    /** One pass over every sandbox (also called directly by tests). */
    public void checkAll() {
        for (var sandbox : catalog.all()) {
            if (closed) return;
            if (sandbox.state() instanceof SandboxState.Deleted) continue;
            try {
                check(sandbox);
            } catch (RuntimeException e) {
                // Deleted while this pass looked at it (its row was read before): nothing to act on.
                var now = catalog.find(sandbox.id());
                if (now.isEmpty() || now.get().state() instanceof SandboxState.Deleted) continue;
                log.atWarn().addKeyValue("sandbox", sandbox.id()).setCause(e).log("idle policy could not act");
            }
        }
    }

    private void check(Sandbox sandbox) {
        SandboxId id = sandbox.id();
        boolean running = sandbox.state() instanceof SandboxState.Running;
        boolean unread = running && !lastCpu.containsKey(id);
        if (activity.isAttached(id) || busy(sandbox) || (running && keptAwake.test(id))) activity.touch(id);
        if (running) ttlHibernationRefused.remove(id);
        var decision = IdlePolicy.decide(sandbox.lifecycle(), sandbox.state(), sandbox.createdAt(), activity.lastActivity(id), clock.instant());
        if (decision.isEmpty()) return;
        // Not idle yet for want of a CPU reading before this one (a sandbox new, or running again, since
        // the last tick): it may have been busy since its last call. A tick held up by a slow action (a
        // deletion at an age limit) had paused a sandbox spinning since its creation at its first reading.
        if (unread && !decision.get().reason().equals("ttl")) return;
        var reason = decision.get().reason().equals("ttl") ? LifecycleService.Reason.TTL : LifecycleService.Reason.IDLE;
        if (reason == LifecycleService.Reason.TTL && decision.get().action() == IdlePolicy.Action.HIBERNATE && ttlHibernationRefused.contains(id)) return;
        switch (decision.get().action()) {
            case PAUSE -> lifecycle.pause(id, reason);
            case STANDBY -> lifecycle.standby(id, reason);
            case HIBERNATE -> {
                try {
                    lifecycle.hibernate(id, reason);
                } catch (StasisException e) {
                    if (e.code() != ErrorCode.CHECKPOINT_UNSUPPORTED) throw e;
                    if (reason == LifecycleService.Reason.TTL) {
                        // An age limit acts now, whatever the idle windows: a sleep that keeps its processes instead.
                        ttlHibernationRefused.add(id);
                        lifecycle.standby(id, reason);
                        log.atInfo().addKeyValue("sandbox", id).log("age limit's hibernation refused; in standby instead");
                        return;
                    }
                    // what it runs cannot be checkpointed now: try again after another idle window,
                    // not on every tick (each attempt freezes the sandbox for a CRIU dump)
                    activity.touch(id);
                    log.atInfo().addKeyValue("sandbox", id).log("idle hibernation refused; retrying after another idle window");
                }
            }
            case STOP -> lifecycle.stop(id, reason);
            case DELETE -> {
                sandboxes.delete(id.value(), reason);
                lastCpu.remove(id);
                ttlHibernationRefused.remove(id);
            }
        }
    }

    /** Whether the sandbox's processes used more than {@code busyCpu} of a core since the last tick (false at the first reading). */
    private boolean busy(Sandbox sandbox) {
        if (!(sandbox.state() instanceof SandboxState.Running)) {
            lastCpu.remove(sandbox.id());
            return false;
        }
        var now = runtime.cpuUsage(sandbox.id());
        var before = lastCpu.put(sandbox.id(), now);
        if (before == null) return false;
        double share = (double) now.minus(before).toNanos() / tick.toNanos();
        return share > busyCpu;
    }

    @Override
    public void close() {
        closed = true;
        var t = thread;
        if (t != null) t.interrupt();
    }
}
