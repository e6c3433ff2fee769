package io.stasis.core.lifecycle;

import io.stasis.core.concurrent.Periodic;
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
import java.time.Instant;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies each sandbox's idle policy, once per tick. A sandbox is idle when no API call touched it,
 * nothing is attached to it (a stream, a command being waited for) and its processes used less
 * than {@code busyCpu} of one core since the last reading: an agent's long build is not idle, a
 * forgotten shell is. Busy readings count as activity.
 *
 * <p>The deep steps (hibernate, stop, delete) take a CRIU dump or a teardown, seconds under load:
 * they run beside the passes, a few at once, so that one sandbox's hibernation never holds up
 * another's pause. A sandbox with a step under way is left alone until it ends, and a step waiting
 * for its turn decides again when it gets it: a call in between keeps the sandbox awake.
 */
public final class IdleMonitor implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(IdleMonitor.class);
    /** Deep steps at once: each is a dump or a teardown that competes for the same disks and cores. */
    private static final int DEEP_STEPS_AT_ONCE = 4;
    /** A pass slower than this is logged: the readings themselves are slow (many sandboxes, a loaded host). */
    private static final Duration SLOW_PASS = Duration.ofSeconds(1);
    private static final Duration CLOSE_WAIT = Duration.ofSeconds(30);

    private final SandboxCatalog catalog;
    private final SandboxMeters runtime;
    private final LifecycleService lifecycle;
    private final SandboxService sandboxes;
    private final ActivityTracker activity;
    private final Clock clock;
    private final Duration tick;
    private final double busyCpu;
    private final Predicate<SandboxId> keptAwake;
    private final Executor deepSteps;
    private final Semaphore deepStepTurns = new Semaphore(DEEP_STEPS_AT_ONCE);
    private final Map<SandboxId, CpuReading> lastCpu = new ConcurrentHashMap<>();
    /** Sandboxes with a deep step under way or waiting for its turn: the passes leave them alone. */
    private final Set<SandboxId> stepping = ConcurrentHashMap.newKeySet();
    /** Sandboxes whose age limit's hibernation was refused: in standby instead until they wake, not dumped again every tick. */
    private final Set<SandboxId> ttlHibernationRefused = ConcurrentHashMap.newKeySet();
    private volatile Periodic passes;
    private volatile boolean closed;

    /** A sandbox's CPU time and when it was read: a share of a core is taken over the time really between two readings. */
    private record CpuReading(Duration used, Instant at) {
    }

    /**
     * @param tick      how often policies are checked
     * @param busyCpu   share of one core above which a sandbox counts as busy (e.g. 0.02)
     * @param keptAwake whether something the monitor cannot see keeps a running sandbox awake (keepAlive processes)
     * @param deepSteps where hibernations, stops and deletions run: a thread each in the service, the
     *                  caller's own in tests that want a pass to end with its steps done
     */
    public IdleMonitor(SandboxCatalog catalog, SandboxMeters runtime, LifecycleService lifecycle, SandboxService sandboxes,
                       ActivityTracker activity, Clock clock, Duration tick, double busyCpu,
                       Predicate<SandboxId> keptAwake, Executor deepSteps) {
        this.keptAwake = keptAwake;
        this.catalog = catalog;
        this.runtime = runtime;
        this.lifecycle = lifecycle;
        this.sandboxes = sandboxes;
        this.activity = activity;
        this.clock = clock;
        this.tick = tick;
        this.busyCpu = busyCpu;
        this.deepSteps = deepSteps;
    }

    public void start() {
        passes = Periodic.start("idle-monitor", tick, Duration.ofSeconds(5), this::checkAll);
    }

    /** One pass over every sandbox (also called directly by tests). */
    public void checkAll() {
        long start = System.nanoTime();
        int looked = 0;
        var listed = new HashSet<SandboxId>();
        for (var sandbox : catalog.all()) {
            if (closed) return;
            if (sandbox.state() instanceof SandboxState.Deleted) continue;
            listed.add(sandbox.id());
            if (stepping.contains(sandbox.id())) continue;
            looked++;
            try {
                check(sandbox);
            } catch (RuntimeException e) {
                if (!stillThere(sandbox.id())) continue; // deleted while this pass looked at it: nothing to act on
                log.atWarn().addKeyValue("sandbox", sandbox.id()).setCause(e).log("idle policy could not act");
            }
        }
        // What is kept of sandboxes deleted since (through the API, by another node) goes with them.
        lastCpu.keySet().retainAll(listed);
        ttlHibernationRefused.retainAll(listed);
        long ms = (System.nanoTime() - start) / 1_000_000;
        if (ms >= SLOW_PASS.toMillis())
            log.atInfo().addKeyValue("sandboxes", looked).addKeyValue("ms", ms).addKeyValue("tick", tick).log("idle pass slower than it should be");
    }

    private boolean stillThere(SandboxId id) {
        var now = catalog.find(id);
        return now.isPresent() && !(now.get().state() instanceof SandboxState.Deleted);
    }

    private void check(Sandbox sandbox) {
        SandboxId id = sandbox.id();
        boolean running = sandbox.state() instanceof SandboxState.Running;
        boolean unread = running && !lastCpu.containsKey(id);
        if (activity.isAttached(id) || busy(sandbox) || (running && keptAwake.test(id))) activity.touch(id);
        if (running) ttlHibernationRefused.remove(id);
        var decision = decide(sandbox);
        if (decision.isEmpty()) return;
        // Not idle yet for want of a CPU reading before this one (a sandbox new, or running again, since
        // the last tick): it may have been busy since its last call. A tick held up by a slow action (a
        // deletion at an age limit) had paused a sandbox spinning since its creation at its first reading.
        if (unread && !decision.get().reason().equals("ttl")) return;
        switch (decision.get().action()) {
            case PAUSE -> lifecycle.pause(id, reasonOf(decision.get()));
            case STANDBY -> lifecycle.standby(id, reasonOf(decision.get()));
            case HIBERNATE, STOP, DELETE -> startDeepStep(id, decision.get());
        }
    }

    private Optional<IdlePolicy.Decision> decide(Sandbox sandbox) {
        var decision = IdlePolicy.decide(sandbox.lifecycle(), sandbox.state(), sandbox.createdAt(), activity.lastActivity(sandbox.id()), clock.instant());
        // An age limit's hibernation refused once waits for the sandbox to wake (it is in standby meanwhile).
        if (decision.isPresent() && isTtl(decision.get()) && decision.get().action() == IdlePolicy.Action.HIBERNATE
                && ttlHibernationRefused.contains(sandbox.id())) return Optional.empty();
        return decision;
    }

    private static boolean isTtl(IdlePolicy.Decision decision) {
        return decision.reason().equals("ttl");
    }

    private static LifecycleService.Reason reasonOf(IdlePolicy.Decision decision) {
        return isTtl(decision) ? LifecycleService.Reason.TTL : LifecycleService.Reason.IDLE;
    }

    private void startDeepStep(SandboxId id, IdlePolicy.Decision decided) {
        if (!stepping.add(id)) return;
        try {
            deepSteps.execute(() -> {
                try {
                    deepStepTurns.acquireUninterruptibly();
                    try {
                        if (!closed) deepStep(id, decided);
                    } finally {
                        deepStepTurns.release();
                    }
                } catch (RuntimeException e) {
                    if (stillThere(id)) log.atWarn().addKeyValue("sandbox", id).setCause(e).log("idle policy could not act");
                } finally {
                    stepping.remove(id);
                }
            });
        } catch (RuntimeException e) {
            stepping.remove(id);
            throw e;
        }
    }

    /** A deep step once it has its turn, if the sandbox still calls for it: it may have been used meanwhile. */
    private void deepStep(SandboxId id, IdlePolicy.Decision decided) {
        var sandbox = catalog.find(id);
        if (sandbox.isEmpty() || activity.isAttached(id)) return;
        var decision = decide(sandbox.get());
        if (!decision.equals(Optional.of(decided))) return;
        var reason = reasonOf(decided);
        switch (decided.action()) {
            case HIBERNATE -> hibernate(id, reason);
            case STOP -> lifecycle.stop(id, reason);
            case DELETE -> {
                sandboxes.delete(id.value(), reason);
                lastCpu.remove(id);
                ttlHibernationRefused.remove(id);
            }
            default -> throw new IllegalStateException("not a deep step: " + decided.action());
        }
    }

    private void hibernate(SandboxId id, LifecycleService.Reason reason) {
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

    /**
     * Whether the sandbox's processes used more than {@code busyCpu} of a core since the last reading
     * (false at the first). The share is over the time really between the readings, not the tick: a
     * pass held up would otherwise count the few milliseconds an idle sandbox uses over seconds as
     * one tick's, and call it busy.
     */
    private boolean busy(Sandbox sandbox) {
        if (!(sandbox.state() instanceof SandboxState.Running)) {
            lastCpu.remove(sandbox.id());
            return false;
        }
        var now = new CpuReading(runtime.cpuUsage(sandbox.id()), clock.instant());
        var before = lastCpu.put(sandbox.id(), now);
        if (before == null) return false;
        long between = Math.max(Duration.between(before.at(), now.at()).toNanos(), tick.toNanos());
        double share = (double) now.used().minus(before.used()).toNanos() / between;
        return share > busyCpu;
    }

    /** Ends the passes and waits a while for the deep steps under way, so none is cut off by the service's own shutdown. */
    @Override
    public void close() {
        closed = true;
        var p = passes;
        if (p != null) p.close();
        long deadline = System.nanoTime() + CLOSE_WAIT.toNanos();
        while (!stepping.isEmpty() && System.nanoTime() < deadline) LockSupport.parkNanos(Duration.ofMillis(10).toNanos());
        if (!stepping.isEmpty()) log.atWarn().addKeyValue("sandboxes", stepping).log("idle steps still under way at shutdown");
    }
}
