package io.stasis.core.lifecycle;

import io.stasis.core.concurrent.AheadOfDemand;
import io.stasis.core.network.EgressPolicy;
import io.stasis.core.network.NetworkPolicy;
import io.stasis.core.network.NetworkService;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.RuntimeKind;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.RootStore;
import io.stasis.core.spi.RuntimeSpec;
import io.stasis.core.spi.SandboxRuntime;
import io.stasis.core.spi.TemplateImage;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sandboxes started ahead of demand, a few per template, so that a create only has to hand one
 * out: starting a container costs tens of milliseconds, handing out a running one almost nothing.
 * A template's pool keeps {@link Sizing#floor} at rest; each take that finds it empty doubles what it
 * keeps, up to {@link Sizing#ceiling}, so that a burst of creates or forks finds sandboxes ready from
 * its first misses on; after {@link #QUIET} without a miss it halves again ({@link #settle}), the
 * surplus ended.
 * A warm sandbox runs with the default resources and its id as hostname, at a low CPU weight until
 * handed out ({@link RuntimeSpec#background}); it is not in the
 * catalog until handed out, so after a crash reconciliation removes it like any orphan. Creates
 * take one of their template ({@link #take}); forks of a files checkpoint take any, and give it
 * the checkpoint's root ({@link #takeAny}, {@link SandboxRuntime#reroot}).
 */
public final class WarmPool implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(WarmPool.class);
    /** How long a grown pool waits without a miss before it halves. */
    static final Duration QUIET = Duration.ofMinutes(2);
    /** Starts at most this many at a time: more only share the same cores with the takes they are for. */
    private static final int PARALLEL_STARTS = Math.max(2, Runtime.getRuntime().availableProcessors());

    /** A started sandbox waiting for an owner, and the template version its root came from. */
    record Warm(SandboxId id, String templateVersion) {
    }

    private final RootStore roots;
    private final SandboxRuntime runtime;
    private final NetworkService network;
    private final Resources resources;
    private final RuntimeKind kind;

    /**
     * How many started sandboxes a template's pool keeps: {@code floor} at rest, up to {@code max}
     * (never below the floor) while takes find it empty. A floor of 0: no pool.
     */
    public record Sizing(int floor, int max) {
        public Sizing {
            if (floor < 0 || max < 0) throw new IllegalArgumentException("a pool size is 0 or more: " + floor + ", " + max);
        }

        public static Sizing fixed(int size) {
            return new Sizing(size, size);
        }

        public int ceiling() {
            return Math.max(floor, max);
        }
    }

    /** What a template's pool aims at now, and when a take last found it empty. */
    private static final class Demand {
        int target;
        Instant lastMiss;

        Demand(int target, Instant lastMiss) {
            this.target = target;
            this.lastMiss = lastMiss;
        }
    }

    private final Sizing sizing;
    private final Clock clock;
    private final UnrecordedSandbox unrecorded;
    private final Map<String, Demand> demand = new ConcurrentHashMap<>();
    private final Map<String, ConcurrentLinkedDeque<Warm>> ready = new ConcurrentHashMap<>();
    private final Map<String, AtomicBoolean> filling = new ConcurrentHashMap<>();
    private final Set<Thread> refills = ConcurrentHashMap.newKeySet();
    private final ReentrantLock closing = new ReentrantLock();
    private volatile boolean closed;

    /**
     * @param resources   the resources warm sandboxes start with; whoever takes one applies others
     * @param kind        the runtime warm sandboxes run in: only a sandbox of that runtime takes one
     * @param sizing      how many started sandboxes to keep ready per template
     */
    public WarmPool(RootStore roots, SandboxRuntime runtime, NetworkService network, Resources resources, RuntimeKind kind, Sizing sizing,
                    Clock clock) {
        this.roots = roots;
        this.runtime = runtime;
        this.network = network;
        this.resources = resources;
        this.kind = kind;
        this.sizing = sizing;
        this.clock = clock;
        this.unrecorded = new UnrecordedSandbox(roots, runtime, network);
    }

    /** The resources warm sandboxes run with. */
    public Resources resources() {
        return resources;
    }

    /** The runtime warm sandboxes run in. */
    public RuntimeKind runtime() {
        return kind;
    }

    /** A sandbox taken from the pool, and the template whose pool it came from (to {@link #refill}). */
    public record Taken(SandboxId id, String template) {
    }

    /**
     * A running sandbox made from the template's current version, if one is ready. The caller
     * refills the pool once it is done with it ({@link #refill}): starting its replacement would
     * compete with the caller for the host's cores. With none ready, refilling starts now.
     */
    Optional<SandboxId> take(String template) {
        if (sizing.floor() <= 0 || closed) return Optional.empty();
        var current = roots.template(template).map(TemplateImage::version);
        if (current.isEmpty()) return Optional.empty();
        var queue = ready.computeIfAbsent(template, t -> new ConcurrentLinkedDeque<>());
        Optional<SandboxId> taken = Optional.empty();
        for (Warm warm; taken.isEmpty() && (warm = queue.pollFirst()) != null; ) {
            if (warm.templateVersion().equals(current.get()) && handedOut(warm.id())) taken = Optional.of(warm.id());
            else discard(warm.id());
        }
        if (taken.isEmpty()) {
            missed(template);
            refill(template);
        }
        return taken;
    }

    /**
     * A running sandbox of any template, for a caller that gives it a root of its own: one of
     * {@code preferred} if there is one, else of the template with the most waiting. The caller
     * refills once done, as after {@link #take}.
     */
    public Optional<Taken> takeAny(String preferred) {
        if (sizing.floor() <= 0 || closed) return Optional.empty();
        var order = new ArrayList<String>();
        if (ready.containsKey(preferred)) order.add(preferred);
        ready.entrySet().stream().filter(e -> !e.getKey().equals(preferred))
                .sorted((a, b) -> Integer.compare(b.getValue().size(), a.getValue().size())).forEach(e -> order.add(e.getKey()));
        for (String template : order) {
            for (Warm warm; (warm = ready.get(template).pollFirst()) != null; ) {
                if (handedOut(warm.id())) return Optional.of(new Taken(warm.id(), template));
                discard(warm.id());
            }
        }
        missed(preferred);
        refill(preferred);
        return Optional.empty();
    }

    /** A warm sandbox, started in the background, gets the usual CPU weight for its owner; false if it cannot (it is gone). */
    private boolean handedOut(SandboxId id) {
        try {
            runtime.foreground(id);
            return true;
        } catch (RuntimeException e) {
            log.atWarn().addKeyValue("sandbox", id).setCause(e).log("a warm sandbox could not be handed out; it is discarded");
            return false;
        }
    }

    /** A take found the template's pool empty: it keeps twice as many from now on, up to the ceiling. */
    private void missed(String template) {
        var d = demandOf(template);
        int grown;
        synchronized (d) {
            d.lastMiss = clock.instant();
            grown = Math.min(sizing.ceiling(), Math.max(d.target * 2, d.target + 1));
            if (grown == d.target) return;
            d.target = grown;
        }
        log.atInfo().addKeyValue("template", template).addKeyValue("size", grown).log("warm pool grows: a take found it empty");
    }

    private Demand demandOf(String template) {
        return demand.computeIfAbsent(template, t -> new Demand(sizing.floor(), clock.instant()));
    }

    /** How many the template's pool aims to keep now. */
    int target(String template) {
        var d = demandOf(template);
        synchronized (d) {
            return d.target;
        }
    }

    /**
     * Halves each pool that went {@link #QUIET} without a miss (not below its floor) and ends what it
     * holds beyond that: called periodically, so that a burst's pool does not stay at rest.
     */
    public void settle() {
        Instant now = clock.instant();
        for (var entry : demand.entrySet()) {
            var d = entry.getValue();
            int target;
            synchronized (d) {
                if (d.target > sizing.floor() && !now.isBefore(d.lastMiss.plus(QUIET))) {
                    d.target = Math.max(sizing.floor(), d.target / 2);
                    d.lastMiss = now; // the next halving waits as long again
                    log.atInfo().addKeyValue("template", entry.getKey()).addKeyValue("size", d.target)
                            .log("warm pool shrinks: no take found it empty for a while");
                }
                target = d.target;
            }
            var queue = ready.get(entry.getKey());
            if (queue == null) continue;
            for (Warm surplus; queue.size() > target && (surplus = queue.pollLast()) != null; ) discard(surplus.id());
        }
    }

    /**
     * Tops the template's pool up to its size, on a background thread, once half of it or more is
     * gone: a burst's takes then run without starts beside them until then (a pool of 2 refills
     * after each take).
     */
    public void refill(String template) {
        if (sizing.floor() <= 0 || closed) return;
        var waiting = ready.get(template);
        if (waiting != null && waiting.size() > target(template) / 2) return;
        var flag = filling.computeIfAbsent(template, t -> new AtomicBoolean());
        if (!flag.compareAndSet(false, true)) return;
        var refill = Thread.ofVirtual().name("warm-pool-" + template).unstarted(() -> {
            try {
                var queue = ready.computeIfAbsent(template, t -> new ConcurrentLinkedDeque<>());
                while (!closed && queue.size() < target(template)) {
                    // Start the missing ones side by side: a burst of creates empties the pool fast.
                    int missing = Math.min(PARALLEL_STARTS, target(template) - queue.size());
                    var starts = new ArrayList<Thread>();
                    var started = new ConcurrentLinkedDeque<Warm>();
                    for (int i = 0; i < missing; i++)
                        starts.add(Thread.ofVirtual().start(() -> AheadOfDemand.call(() -> start(template)).ifPresent(started::add)));
                    for (Thread t : starts) t.join();
                    if (started.isEmpty()) return;
                    started.forEach(queue::addLast);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                flag.set(false);
                refills.remove(Thread.currentThread());
            }
        });
        refills.add(refill);
        refill.start();
    }

    private Optional<Warm> start(String template) {
        var version = roots.template(template).map(TemplateImage::version);
        if (version.isEmpty()) return Optional.empty();
        var id = SandboxId.random();
        try {
            var root = roots.createRoot(id, template, resources.diskBytes());
            // Warm sandboxes reach nothing until handed out with their owner's policy.
            var link = network.open(id, new NetworkPolicy(EgressPolicy.DENY_ALL), Optional.empty());
            // In the background: the calls of the moment come first (see RuntimeSpec#background).
            runtime.create(new RuntimeSpec(id, root, id.hostname(), resources, link, List.of(), kind).inBackground());
            return Optional.of(new Warm(id, version.get()));
        } catch (RuntimeException e) {
            log.atWarn().addKeyValue("template", template).setCause(e).log("could not start a warm sandbox");
            discard(id);
            return Optional.empty();
        }
    }

    private void discard(SandboxId id) {
        unrecorded.end(id);
    }

    /** Ends every waiting sandbox, once refills under way have finished. Later takes find nothing. */
    @Override
    public void close() {
        closed = true;
        for (Thread refill : List.copyOf(refills)) {
            try {
                refill.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        closing.lock();
        try {
            var all = new ArrayList<Warm>();
            for (var queue : ready.values()) for (Warm w; (w = queue.pollFirst()) != null; ) all.add(w);
            for (var warm : all) discard(warm.id());
        } finally {
            closing.unlock();
        }
    }

    /** How many are waiting, per template (for tests and metrics). */
    Map<String, Integer> sizes() {
        var out = new ConcurrentHashMap<String, Integer>();
        ready.forEach((t, q) -> out.put(t, q.size()));
        return out;
    }

    List<SandboxId> waiting() {
        var out = new ArrayList<SandboxId>();
        ready.values().forEach(q -> q.forEach(w -> out.add(w.id())));
        return out;
    }
}
