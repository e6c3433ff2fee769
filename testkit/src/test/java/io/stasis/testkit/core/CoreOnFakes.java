package io.stasis.testkit.core;

import io.stasis.core.node.NodeLimits;
import io.stasis.core.sandbox.RuntimeKind;
import io.stasis.core.bucket.BucketEndpoints;
import io.stasis.core.bucket.SandboxBuckets;
import io.stasis.core.checkpoint.CheckpointService;
import io.stasis.core.checkpoint.DurableCheckpoints;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.events.EventLog;
import io.stasis.core.journal.FaultPoints;
import io.stasis.core.lifecycle.ActivityTracker;
import io.stasis.core.lifecycle.ForkSpares;
import io.stasis.core.lifecycle.LifecycleService;
import io.stasis.core.lifecycle.Reconciler;
import io.stasis.core.lifecycle.RestoreTurns;
import io.stasis.core.lifecycle.SandboxLocks;
import io.stasis.core.lifecycle.SandboxParts;
import io.stasis.core.lifecycle.SandboxService;
import io.stasis.core.lifecycle.WarmPool;
import io.stasis.core.network.EgressPolicy;
import io.stasis.core.network.NetworkPolicy;
import io.stasis.core.network.NetworkService;
import io.stasis.core.policy.LifecyclePolicy;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxSpec;
import io.stasis.core.spi.FileOwner;
import io.stasis.core.spi.HostNetwork;
import io.stasis.core.template.TemplateService;
import io.stasis.core.tenant.QuotaGuard;
import io.stasis.core.tenant.TenantId;
import io.stasis.core.volume.VolumeService;
import io.stasis.testkit.MutableClock;
import io.stasis.testkit.TestRecipe;
import io.stasis.testkit.fake.DirectoryRootStore;
import io.stasis.testkit.fake.DirectoryVolumeStore;
import io.stasis.testkit.fake.FakeSandboxRuntime;
import io.stasis.testkit.fake.InMemoryCatalog;
import io.stasis.testkit.fake.InMemoryCheckpointArchive;
import io.stasis.testkit.fake.InMemoryHostNetwork;
import io.stasis.testkit.fake.InMemoryVolumeArchive;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Core's services wired as the server wires them, on the fakes of every SPI: a whole service in
 * memory and a temporary directory, with no root, no runc and no btrfs. Tests reach each fake to
 * look inside or to make a step fail, and {@link #faults} to stop at a fault point.
 */
public final class CoreOnFakes implements AutoCloseable {
    public static final FileOwner OWNER = new FileOwner(100_000, 100_000);
    public static final String TEMPLATE = "tiny";
    /** The host's largest disk ({@code --max-disk-mb}). */
    public static final int MAX_DISK_MB = 20 * 1024;

    /** What outlives the service: the host's state (its disk, its processes, the store). */
    public record Host(MutableClock clock, InMemoryCatalog catalog, DirectoryRootStore roots, FakeSandboxRuntime runtime,
                       InMemoryHostNetwork network, InMemoryCheckpointArchive archive, DirectoryVolumeStore volumeStore,
                       InMemoryVolumeArchive volumeArchive) {
        public static Host in(Path dir) {
            return sharing(dir, new InMemoryCheckpointArchive(), new InMemoryVolumeArchive());
        }

        /** A host of its own that shares a durable store with others (another machine of the same team). */
        public static Host sharing(Path dir, InMemoryCheckpointArchive archive, InMemoryVolumeArchive volumeArchive) {
            var clock = new MutableClock();
            return new Host(clock, new InMemoryCatalog(clock), new DirectoryRootStore(dir.resolve("roots"), clock), new FakeSandboxRuntime(),
                    new InMemoryHostNetwork(), archive, new DirectoryVolumeStore(dir.resolve("volumes")), volumeArchive);
        }
    }

    public final Host host;
    public final MutableClock clock;
    public final InMemoryCatalog catalog;
    public final DirectoryRootStore roots;
    public final FakeSandboxRuntime runtime;
    public final InMemoryHostNetwork hostNetwork;
    public final RecordingFaults faults = new RecordingFaults();
    public final SandboxLocks locks = new SandboxLocks();
    public final EventLog events;
    public final ActivityTracker activity;
    public final QuotaGuard quotas;
    public final VolumeService volumes;
    public final NetworkService network;
    public final SandboxBuckets buckets;
    public final TemplateService templates;
    public final WarmPool pool;
    public final ForkSpares spares;
    public final SandboxService sandboxes;
    public final DurableCheckpoints durable;
    public final LifecycleService lifecycle;
    public final CheckpointService checkpoints;

    /** A fault point that throws when reached, once armed: the step a crash test stops at. */
    public static final class RecordingFaults implements FaultPoints {
        private final List<String> reached = new ArrayList<>();
        private volatile String armed;

        public void arm(String step) {
            armed = step;
        }

        public synchronized List<String> reached() {
            return List.copyOf(reached);
        }

        @Override
        public void reach(String step) {
            synchronized (this) {
                reached.add(step);
            }
            if (step.equals(armed)) {
                armed = null;
                throw new Crash(step);
            }
        }
    }

    /**
     * What an armed fault point throws: the service "dies" there, leaving what it did so far. An
     * Error, so that no {@code catch (RuntimeException)} on the way out undoes anything, as none
     * would run in a killed process.
     */
    public static final class Crash extends Error {
        public Crash(String step) {
            super("crashed at " + step);
        }
    }

    public CoreOnFakes(Path dir) {
        this(Host.in(dir), 0);
    }

    /** @param warmPerTemplate sandboxes kept started ahead per template (0: every create starts one) */
    public CoreOnFakes(Host host, int warmPerTemplate) {
        this(host, WarmPool.Sizing.fixed(warmPerTemplate));
    }

    /** @param warmPool sandboxes kept started ahead per template */
    public CoreOnFakes(Host host, WarmPool.Sizing warmPool) {
        this.host = host;
        clock = host.clock();
        catalog = host.catalog();
        roots = host.roots();
        runtime = host.runtime();
        hostNetwork = host.network();
        events = new EventLog(catalog, clock);
        activity = new ActivityTracker(clock);
        quotas = new QuotaGuard(catalog, catalog.localNode(), NodeLimits.NONE);
        volumes = new VolumeService(catalog, host.volumeStore(), host.volumeArchive(), OWNER, clock, 100_000, quotas);
        network = new NetworkService(catalog, Optional.of((HostNetwork) hostNetwork), new NetworkPolicy(EgressPolicy.DENY_ALL), events,
                clock, Optional.empty(), locks);
        buckets = new SandboxBuckets(Optional.empty(), catalog, (tenant, name) -> Optional.empty(),
                new BucketEndpoints(List.of(), Set::of, name -> List.of()), Duration.ofSeconds(10));
        templates = new TemplateService(roots, List.of(TestRecipe.of(TEMPLATE, "1")), OWNER);
        templates.ensureInstalled(TemplateService.SlowBuilds.ON_DEMAND);
        pool = new WarmPool(roots, runtime, network, Resources.DEFAULT, RuntimeKind.RUNC, warmPool, clock);
        var restoreTurns = RestoreTurns.forThisHost();
        spares = new ForkSpares(roots, runtime, network, quotas, restoreTurns, 100);
        var parts = new SandboxParts(catalog, roots, runtime, locks, events, activity, faults, clock, network, quotas, volumes, buckets,
                MAX_DISK_MB);
        sandboxes = new SandboxService(parts, templates, Duration.ofSeconds(5), pool, spares);
        durable = new DurableCheckpoints(catalog, roots, runtime, host.archive(), network::policyOf, buckets::bucketsOf, faults, clock,
                2, false);
        lifecycle = new LifecycleService(parts);
        checkpoints = new CheckpointService(parts, lifecycle, durable, pool, spares, restoreTurns);
    }

    /**
     * A new service on this one's host, as after a SIGKILL and a start: this one's objects are
     * dropped without closing (a dead process closes nothing), the new one reconciles first.
     */
    public CoreOnFakes restart() {
        var next = new CoreOnFakes(host, 0);
        next.reconcile();
        // The server then loads the host's network from what the catalog records (LinuxNetworking.start): a
        // sandbox whose record is gone loses its rules.
        var recorded = next.network.recorded();
        for (var id : hostNetwork.listOpen()) if (!recorded.containsKey(id)) hostNetwork.close(id);
        // Then, as the server does, the uploads a crash cut short start again, and the spares come back.
        next.durable.resumeInterrupted();
        next.checkpoints.restoreSpares();
        return next;
    }

    /** The reconciler a restarted service runs first, on what this one left. */
    public Reconciler.Report reconcile() {
        return new Reconciler(catalog, roots, runtime, events, clock, network).reconcile();
    }

    /** The code of a {@link StasisException} a call threw. */
    public static ErrorCode codeOf(Throwable e) {
        return ((StasisException) e).code();
    }

    public Sandbox create() {
        return create(Optional.empty());
    }

    public Sandbox create(Optional<String> name) {
        return sandboxes.create(new SandboxSpec(TEMPLATE, name, Map.of(), Map.of(), Resources.DEFAULT, LifecyclePolicy.DEFAULT,
                Optional.empty(), TenantId.DEFAULT));
    }

    @Override
    public void close() {
        spares.close();
        pool.close();
        durable.close();
    }
}
