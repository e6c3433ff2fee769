package io.stasis.core.lifecycle;

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
 * A warm sandbox runs with the default resources and its id as hostname; it is not in the
 * catalog until handed out, so after a crash reconciliation removes it like any orphan. Creates
 * take one of their template ({@link #take}); forks of a files checkpoint take any, and give it
 * the checkpoint's root ({@link #takeAny}, {@link SandboxRuntime#reroot}).
 */
public final class WarmPool implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(WarmPool.class);

    /** A started sandbox waiting for an owner, and the template version its root came from. */
    record Warm(SandboxId id, String templateVersion) {
    }

    private final RootStore roots;
    private final SandboxRuntime runtime;
    private final NetworkService network;
    private final Resources resources;
    private final RuntimeKind kind;
    private final int perTemplate;
    private final UnrecordedSandbox unrecorded;
    private final Map<String, ConcurrentLinkedDeque<Warm>> ready = new ConcurrentHashMap<>();
    private final Map<String, AtomicBoolean> filling = new ConcurrentHashMap<>();
    private final Set<Thread> refills = ConcurrentHashMap.newKeySet();
    private final ReentrantLock closing = new ReentrantLock();
    private volatile boolean closed;

    /**
     * @param resources   the resources warm sandboxes start with; whoever takes one applies others
     * @param kind        the runtime warm sandboxes run in: only a sandbox of that runtime takes one
     * @param perTemplate how many started sandboxes to keep ready per template (0: none)
     */
    public WarmPool(RootStore roots, SandboxRuntime runtime, NetworkService network, Resources resources, RuntimeKind kind, int perTemplate) {
        this.roots = roots;
        this.runtime = runtime;
        this.network = network;
        this.resources = resources;
        this.kind = kind;
        this.perTemplate = perTemplate;
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
        if (perTemplate <= 0 || closed) return Optional.empty();
        var current = roots.template(template).map(TemplateImage::version);
        if (current.isEmpty()) return Optional.empty();
        var queue = ready.computeIfAbsent(template, t -> new ConcurrentLinkedDeque<>());
        Optional<SandboxId> taken = Optional.empty();
        for (Warm warm; taken.isEmpty() && (warm = queue.pollFirst()) != null; ) {
            if (warm.templateVersion().equals(current.get())) taken = Optional.of(warm.id());
            else discard(warm.id());
        }
        if (taken.isEmpty()) refill(template);
        return taken;
    }

    /**
     * A running sandbox of any template, for a caller that gives it a root of its own: one of
     * {@code preferred} if there is one, else of the template with the most waiting. The caller
     * refills once done, as after {@link #take}.
     */
    public Optional<Taken> takeAny(String preferred) {
        if (perTemplate <= 0 || closed) return Optional.empty();
        var order = new ArrayList<String>();
        if (ready.containsKey(preferred)) order.add(preferred);
        ready.entrySet().stream().filter(e -> !e.getKey().equals(preferred))
                .sorted((a, b) -> Integer.compare(b.getValue().size(), a.getValue().size())).forEach(e -> order.add(e.getKey()));
        for (String template : order) {
            var warm = ready.get(template).pollFirst();
            if (warm != null) return Optional.of(new Taken(warm.id(), template));
        }
        refill(preferred);
        return Optional.empty();
    }

    /** Tops the template's pool up to its size, on a background thread. */
    public void refill(String template) {
        if (perTemplate <= 0 || closed) return;
        var flag = filling.computeIfAbsent(template, t -> new AtomicBoolean());
        if (!flag.compareAndSet(false, true)) return;
        var refill = Thread.ofVirtual().name("warm-pool-" + template).unstarted(() -> {
            try {
                var queue = ready.computeIfAbsent(template, t -> new ConcurrentLinkedDeque<>());
                while (!closed && queue.size() < perTemplate) {
                    // Start the missing ones side by side: a burst of creates empties the pool fast.
                    int missing = perTemplate - queue.size();
                    var starts = new ArrayList<Thread>();
                    var started = new ConcurrentLinkedDeque<Warm>();
                    for (int i = 0; i < missing; i++)
                        starts.add(Thread.ofVirtual().start(() -> start(template).ifPresent(started::add)));
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
            runtime.create(new RuntimeSpec(id, root, id.hostname(), resources, link, List.of(), kind));
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
