package io.stasis.server;

import io.stasis.blob.content.ContentStore;
import io.stasis.blob.content.ContentStoreConfig;
import io.stasis.blob.content.archive.BlobCheckpointArchive;
import io.stasis.blob.content.archive.BlobGc;
import io.stasis.blob.content.archive.ContentVolumeArchive;
import io.stasis.blob.local.LocalBlobStore;
import io.stasis.blob.s3.S3BlobStore;
import io.stasis.blob.s3.S3BlobStoreConfig;
import io.stasis.catalog.sql.EventRetention;
import io.stasis.catalog.sql.SqlCatalog;
import io.stasis.catalog.sql.SqliteToPostgres;
import io.stasis.core.node.LeaseFreeze;
import io.stasis.core.node.LostNodes;
import io.stasis.core.node.NodeDrain;
import io.stasis.core.node.NodeService;
import io.stasis.core.auth.ApiKey;
import io.stasis.core.auth.Credentials;
import io.stasis.core.auth.TokenService;
import io.stasis.core.bucket.BucketEndpoints;
import io.stasis.core.bucket.SandboxBuckets;
import io.stasis.core.checkpoint.Checkpoint;
import io.stasis.core.checkpoint.CheckpointService;
import io.stasis.core.checkpoint.DurabilityKeeper;
import io.stasis.core.checkpoint.DurableCheckpoints;
import io.stasis.core.concurrent.Periodic;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.events.EventLog;
import io.stasis.core.exec.ExecService;
import io.stasis.core.exec.SandboxUsers;
import io.stasis.core.files.FileService;
import io.stasis.core.journal.FaultPoints;
import io.stasis.core.lifecycle.ActivityTracker;
import io.stasis.core.lifecycle.ForkSpares;
import io.stasis.core.lifecycle.ExitWatch;
import io.stasis.core.lifecycle.IdleMonitor;
import io.stasis.core.lifecycle.LifecycleService;
import io.stasis.core.lifecycle.Reconciler;
import io.stasis.core.lifecycle.RestoreTurns;
import io.stasis.core.lifecycle.SandboxLocks;
import io.stasis.core.lifecycle.SandboxParts;
import io.stasis.core.lifecycle.SandboxService;
import io.stasis.core.lifecycle.SandboxUsage;
import io.stasis.core.lifecycle.WarmPool;
import io.stasis.core.network.NetworkService;
import io.stasis.core.preview.PreviewService;
import io.stasis.core.process.OutputLimiter;
import io.stasis.core.process.ProcessService;
import io.stasis.core.sandbox.RuntimeKind;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxQuery;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.secret.SecretInjection;
import io.stasis.core.secret.SecretService;
import io.stasis.core.spi.BlobStore;
import io.stasis.core.spi.BucketMounts;
import io.stasis.core.spi.Catalog;
import io.stasis.core.spi.FileOwner;
import io.stasis.core.spi.HostNetwork;
import io.stasis.core.spi.SandboxRuntime;
import io.stasis.core.spi.TemplateRecipe;
import io.stasis.core.template.TemplateBuilds;
import io.stasis.core.template.TemplateSandboxes;
import io.stasis.core.template.TemplateService;
import io.stasis.core.tenant.QuotaGuard;
import io.stasis.core.tenant.TenantId;
import io.stasis.core.tenant.TenantService;
import io.stasis.core.volume.VolumeService;
import io.stasis.fs.linux.InotifyFileWatcher;
import io.stasis.fs.linux.LinuxSandboxFiles;
import io.stasis.host.FileTrees;
import io.stasis.host.HostAddresses;
import io.stasis.host.HostClaim;
import io.stasis.host.SwapFile;
import io.stasis.host.ToolCgroup;
import io.stasis.host.ToolRunner;
import io.stasis.mounts.fuse.FuseBucketMounts;
import io.stasis.network.linux.LinuxHostNetwork;
import io.stasis.network.linux.LinuxNetworking;
import io.stasis.network.linux.proxy.Interception;
import io.stasis.network.linux.tls.SandboxAuthorities;
import io.stasis.network.linux.tls.UpstreamTls;
import io.stasis.runtime.runc.RuncConfig;
import io.stasis.runtime.runc.RuncRuntime;
import io.stasis.runtime.runc.RunscConfig;
import io.stasis.runtime.runc.RunscRuntime;
import io.stasis.server.auth.BearerAuth;
import io.stasis.server.auth.RequestRates;
import io.stasis.audit.jsonl.JsonLinesAuditLog;
import io.stasis.core.audit.EgressAudit;
import io.stasis.server.http.HttpApi;
import io.stasis.server.http.NodeForwarder;
import io.stasis.server.metrics.Metrics;
import io.stasis.server.preview.PreviewProxy;
import io.stasis.server.preview.PreviewUrls;
import io.stasis.server.preview.ResumingPreviewTargets;
import io.stasis.server.s3.S3Routes;
import io.stasis.storage.btrfs.BtrfsPool;
import io.stasis.storage.btrfs.BtrfsPoolConfig;
import io.stasis.storage.btrfs.BtrfsRootStore;
import io.stasis.storage.btrfs.BtrfsVolumeStore;
import io.stasis.templates.BaseTemplate;
import io.stasis.templates.oci.OciImports;
import io.stasis.templates.TinyTemplate;
import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The service: wires the adapters to the core with plain constructors, reconciles what it finds on
 * disk, and serves the API. The only class that knows every module.
 */
public final class Daemon implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Daemon.class);
    private static final Duration OUTPUT_LIMIT_TICK = Duration.ofSeconds(5);
    /** How often bucket mounts left uploading by their sandbox are looked at, and removed once done. */
    private static final Duration BUCKET_DRAIN_PERIOD = Duration.ofSeconds(5);
    /** How often a warm pool grown by a burst is checked for having been quiet long enough to shrink. */
    private static final Duration WARM_POOL_SETTLE_PERIOD = Duration.ofSeconds(30);
    /** How soon what a deleted root's forks still hold is charged to one of them. */
    private static final Duration INHERITED_CHARGES_PERIOD = Duration.ofSeconds(5);
    /** The largest image an import takes (its layers, uncompressed), and how long a registry may stay silent. */
    private static final long IMAGE_LIMIT_BYTES = 8L << 30;
    private static final Duration IMAGE_PULL_TIMEOUT = Duration.ofSeconds(60);

    private final List<AutoCloseable> closeInReverse = new ArrayList<>();
    private final BtrfsPool pool;
    private final HttpApi http;
    private final PreviewProxy previewProxy;
    private final SandboxService sandboxes;
    private final Path rootKeyFile;

    private Daemon(ServerConfig config) {
        long start = System.nanoTime();
        try {
            requireRoot();
            claimHostNames(config);
            runToolsInTheirCgroup();
            Files.createDirectories(config.dataDir());
            Files.setPosixFilePermissions(config.dataDir(), PosixFilePermissions.fromString("rwx--x--x"));
            var runtimeConfig = new RuncConfig(config.runc(), config.criu(), config.dataDir().resolve("runtime"),
                    "stasis", 100_000, Duration.ofSeconds(30), config.forkPageSharing());
            var owner = runtimeConfig.rootOwner();
            // The host tools' checks (runc and CRIU, runsc, rclone, the swap file) are process starts, ~0.1-0.25 s each on
            // a slow host, and independent of each other and of the catalog and the pool: side by side. Each step
            // registers what it opened, so a failure anywhere closes everything; the scope waits for all of them.
            SqlCatalog catalog;
            BtrfsRootStore roots;
            TemplateService templates;
            List<TemplateRecipe> recipes = List.of(new TinyTemplate(), new BaseTemplate(config.templateCache()));
            Future<RuntimeRouter> runtimeStep;
            Future<Optional<BucketMounts>> bucketStep;
            Future<?> swapStep;
            try (var steps = Executors.newVirtualThreadPerTaskExecutor()) {
                runtimeStep = steps.submit(() -> openRuntimes(config, runtimeConfig));
                bucketStep = steps.submit(() -> openBucketMounts(config, owner));
                catalog = register(openCatalog(config));
                swapStep = steps.submit(() -> openStandbySwap(config, catalog));
                int staleHolds = catalog.releaseHoldsOf(config.nodeName()); // the previous run's, killed before it released them
                if (staleHolds > 0) log.atInfo().addKeyValue("holds", staleHolds).log("released the quota holds of this node's previous run");
                var poolConfig = config.btrfsMount()
                        .map(mount -> BtrfsPoolConfig.existingMount(config.dataDir(), mount))
                        .orElseGet(() -> BtrfsPoolConfig.image(config.dataDir(), config.poolSizeBytes()));
                pool = register(BtrfsPool.open(poolConfig));
                roots = new BtrfsRootStore(pool);
                templates = new TemplateService(roots, recipes, owner);
                templates.ensureInstalled(config.buildSlowTemplates() ? TemplateService.SlowBuilds.BACKGROUND : TemplateService.SlowBuilds.ON_DEMAND);
            }
            var runtime = resultOf(runtimeStep);
            var bucketMounts = resultOf(bucketStep);
            resultOf(swapStep);
            var clock = Clock.systemUTC();
            var audit = register(new JsonLinesAuditLog(config.dataDir().resolve("audit"), config.audit().maxFileBytes(),
                    config.audit().keepFiles(), clock));
            var locks = new SandboxLocks();
            var events = new EventLog(catalog, clock);
            var activity = new ActivityTracker(clock);
            FaultPoints faults = config.faultPoint().map(Daemon::dieAt).orElse(FaultPoints.NONE);
            var hostNetwork = config.network().host().map(LinuxHostNetwork::new);
            // Secrets: sealed in the catalog; header rules intercept TLS with a CA per sandbox lineage (keys under the data dir).
            var quotas = new QuotaGuard(catalog, config.nodeName(), config.nodeLimits());
            var volumeStore = new BtrfsVolumeStore(pool, config.dataDir().resolve("volume-streams"));
            // One blob store (--blob-store) for durable checkpoints and volume syncs, and one content store on it: its pins keep
            // this instance's uploads and GC apart; lock objects in the store, under this data directory's holder name, keep instances apart.
            var blobStore = register(openBlobStore(config));
            String blobHolder = BlobGc.holder(config.dataDir());
            var content = new ContentStore(blobStore,
                    ContentStoreConfig.DEFAULT.withGcGrace(config.blobs().gcGrace()), clock, blobHolder);
            try {
                content.clearOwnLocks();
            } catch (RuntimeException e) { // the store is unreachable now: the dead run's locks go stale instead
                log.atWarn().addKeyValue("holder", blobHolder).setCause(e).log("could not remove this instance's old blob store locks");
            }
            var volumeArchive = new ContentVolumeArchive(blobStore, content);
            var volumes = new VolumeService(catalog, volumeStore, volumeArchive, owner, clock, MAX_VOLUME_MB, quotas);
            var secrets = new SecretService(catalog, SecretKeyFile.loadOrCreate(config.dataDir().resolve("secrets.key")), clock);
            var authorities = new SandboxAuthorities(config.dataDir().resolve("egress-ca"), clock);
            var injection = new SecretInjection(secrets, roots, new LinuxSandboxFiles(owner), authorities);
            var network = new NetworkService(catalog, hostNetwork.map(HostNetwork.class::cast), config.network().defaultPolicy(), events, clock,
                    Optional.of(injection), locks);
            var buckets = new SandboxBuckets(bucketMounts, catalog,
                    (tenant, name) -> Optional.ofNullable(secrets.values(tenant, List.of(name)).get(name)),
                    new BucketEndpoints(config.buckets().endpointsAllow(), HostAddresses::ofInterfaces, HostAddresses::resolve),
                    config.buckets().releaseWait());
            volumes.reconcile();
            new Reconciler(catalog, roots, runtime, events, clock, network).reconcile();
            // After the sandboxes are settled: their buckets stay mounted while they have processes, no longer otherwise.
            buckets.reconcile(catalog::find);
            var networking = hostNetwork.map(h -> LinuxNetworking.start(h, config.network().dnsNames(), network.recorded(),
                    new EgressAudit(audit, catalog, clock, network), config.network().egressLimits()));
            // The table outlives the service while sandboxes do; with none left, nothing stays behind.
            register(() -> networking.ifPresent(n -> n.close(catalog.allNetworks().isEmpty())));
            networking.ifPresent(n -> n.proxy().intercept(new Interception(network::headersFor, authorities,
                    UpstreamTls.context(config.network().upstreamCa()))));
            // Closed before the runtime: the warm sandboxes end (sandboxes in the catalog keep running).
            var warmPool = register(new WarmPool(roots, runtime, network, config.defaultResources(), config.runtimes().defaultRuntime(),
                    config.warmPool(), clock));
            register(Periodic.start("warm-pool-settle", WARM_POOL_SETTLE_PERIOD, Duration.ofSeconds(30), warmPool::settle));
            var restoreTurns = RestoreTurns.forThisHost();
            var forkSpares = register(new ForkSpares(roots, runtime, network, quotas, restoreTurns, config.forkSparesMax()));
            var parts = new SandboxParts(catalog, roots, runtime, locks, events, activity, faults, clock, network,
                    quotas, volumes, buckets, config.maxDiskMb());
            sandboxes = new SandboxService(parts, templates, config.templateWait(), warmPool, forkSpares);
            sandboxes.warmUp(recipes.stream().map(TemplateRecipe::name).toList());
            var archive = new BlobCheckpointArchive(content, blobStore);
            var durable = register(new DurableCheckpoints(catalog, roots, runtime, archive, network::policyOf,
                    buckets::bucketsOf, faults, clock,
                    config.blobs().uploadConcurrency(), config.blobs().backgroundUploads()));
            BiConsumer<Checkpoint, Sandbox> afterHibernate =
                    config.blobs().hibernateDurable() ? durable::upload : (c, s) -> { };
            var lifecycle = new LifecycleService(parts, afterHibernate, durable::fetchHibernation);
            var checkpoints = new CheckpointService(parts, lifecycle, durable, warmPool, forkSpares, restoreTurns);
            durable.resumeInterrupted();
            checkpoints.restoreSpares();
            var blobGc = register(new BlobGc(content, blobHolder, archive, volumeArchive, config.blobs().gcInterval(),
                    faults, clock));
            blobGc.start();
            var users = new SandboxUsers(new LinuxSandboxFiles(owner));
            var exec = new ExecService(sandboxes, lifecycle, activity, runtime, config.execOutputLimit(), users);
            var processes = new ProcessService(sandboxes, lifecycle, activity, runtime, clock, 100, users);
            var templateBuilds = register(new TemplateBuilds(new TemplateBuilds.Services(sandboxes, exec, processes, checkpoints, lifecycle), roots,
                    templates, clock, config.runtimes().defaultRuntime(), config.network().buildPolicy(BaseTemplate.hostAptMirrors())));
            templateBuilds.removeInterruptedBuilds();
            var files = new FileService(sandboxes, lifecycle, activity, new LinuxSandboxFiles(owner), register(new InotifyFileWatcher()));
            var idle = register(new IdleMonitor(catalog, runtime, lifecycle, sandboxes, activity, clock, config.idleCheck(), 0.02,
                    processes::keepsAwake, step -> Thread.ofVirtual().name("idle-step").start(step)));
            idle.start();
            register(new ExitWatch(catalog, runtime, sandboxes, config.idleCheck())).start();
            register(Periodic.start("inherited-disk-charges", INHERITED_CHARGES_PERIOD, Duration.ofSeconds(30), roots::settleInheritedCharges));
            register(Periodic.start("bucket-drain", BUCKET_DRAIN_PERIOD, Duration.ofSeconds(30),
                    () -> buckets.drain(catalog::find, (id, action) -> locks.exclusive(id, () -> {
                        action.run();
                        return null;
                    }))));
            register(new OutputLimiter(catalog, processes, config.processOutputLimit(), OUTPUT_LIMIT_TICK)).start();
            var credentials = new Credentials(catalog, clock);
            rootKeyFile = config.rootKeyFile().orElse(config.dataDir().resolve("root.key"));
            ensureRootKey(catalog, credentials, config.catalog().isPresent());
            var tenants = new TenantService(catalog, catalog, credentials, clock);
            var tokens = new TokenService(catalog, clock, catalog);
            var metrics = register(new Metrics(catalog::all));
            var bearer = new BearerAuth(credentials);
            // Previews: sandbox ports over HTTP on their own listener, which resumes a sandbox a request is for.
            var previews = new PreviewService(catalog, clock);
            Function<SandboxId, InetAddress> sandboxAddress = id -> network.addressOf(id).orElseThrow(() ->
                    NetworkService.noNetwork(id, "serve a preview"));
            var advertised = new AtomicReference<URI>();
            var previewPort = new java.util.concurrent.atomic.AtomicInteger();
            var nodes = new NodeService(catalog, clock, advertised::get, () -> Optional.of(previewUrlOf(advertised.get(), previewPort.get())),
                    () -> NodeCapacities.of(pool.path(), catalog, config.nodeLimits()), config.nodeLease(),
                    config.catalog().isPresent());
            previewProxy = register(PreviewProxy.start(new PreviewProxy.Settings(config.bind(), config.previews().port(),
                    config.previews().domain()), previews, new ResumingPreviewTargets(lifecycle, activity, sandboxAddress, nodes), clock));
            previewPort.set(previewProxy.port());
            http = register(HttpApi.start(
                    new HttpApi.Settings(config.bind(), config.port(), config.defaultTemplate(), config.defaultResources(),
                            config.defaultLifecycle(), config.maxUploadBytes(), 64L << 20,
                            new PreviewUrls(config.previews().domain(), previewProxy.port()), config.runtimes().defaultRuntime(),
                            config.runtimes().allowed(), config.dataDir().resolve("e2b-uploads"), config.metricsPublic()),
                    new HttpApi.Services(sandboxes, lifecycle, checkpoints, exec, processes, files, templates, templateBuilds,
                            new TemplateSandboxes(sandboxes, checkpoints, roots),
                            register(new OciImports(owner, imageSpool(config), IMAGE_LIMIT_BYTES, IMAGE_PULL_TIMEOUT)), events, activity,
                            bearer, metrics, previews, network, secrets, tenants, tokens, quotas, volumes, buckets,
                            new S3Routes(volumes, bearer, new LinuxSandboxFiles(owner), config.dataDir().resolve("s3-uploads"),
                                    clock, 5L << 30), blobGc, nodes, new NodeDrain(catalog, lifecycle, durable, roots, runtime),
                            new SandboxUsage(sandboxes, runtime, roots, clock), new RequestRates(config.rateLimits(), tenants), audit)));
            advertised.set(config.advertiseUrl().orElseGet(() -> URI.create(http.localUrl())));
            // Running sandboxes whose policy asks for it keep a durable checkpoint with memory, from which another node resumes
            // them if this one is lost; while this node is cut off from the catalog, they are frozen here.
            var keeper = new DurabilityKeeper(catalog, checkpoints, clock, Duration.ofSeconds(1));
            if (config.catalog().isPresent()) nodes.onLease(new LeaseFreeze(runtime, catalog, keeper::kept));
            register(nodes).start();
            register(keeper).start();
            // On a shared catalog, the durably hibernated sandboxes of a node gone for a lease past its own come back here.
            if (config.catalog().isPresent())
                register(new LostNodes(catalog, roots, runtime, network, events, clock, config.nodeLease(), config.nodeLease().dividedBy(3))).start();
            if (config.warmUp() && config.faultPoint().isEmpty()) // a crash test's fault point is for its own calls
                WarmUp.run(http.localUrl(), config.nodeName(), tenants, sandboxes, "tiny");
            log.atInfo().addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).addKeyValue("dataDir", config.dataDir())
                    .log("service started");
        } catch (Throwable e) {
            // Whatever failed (an Error included), nothing this start made may stay behind.
            try {
                close();
            } catch (RuntimeException cleanup) {
                e.addSuppressed(cleanup);
            }
            if (e instanceof RuntimeException r) throw r;
            if (e instanceof Error err) throw err;
            throw new IllegalStateException(e);
        }
    }

    /**
     * The swap file sandboxes in standby page out to ({@code --standby-swap}). It stays on while a
     * sandbox is in standby (its memory is there), so a restart finds it; with none left, stopping
     * the service turns it off and deletes it. Without it (a size of 0, or a filesystem that takes no
     * swap file) a standby only freezes and drops the page cache: logged, the service runs.
     */
    private void openStandbySwap(ServerConfig config, Catalog catalog) {
        if (config.standbySwapBytes() == 0) {
            log.atInfo().log("no standby swap file (--standby-swap 0): standby keeps memory in RAM");
            return;
        }
        try {
            var swap = SwapFile.open(config.dataDir().resolve("standby.swap"), config.standbySwapBytes());
            register(() -> {
                boolean inStandby = catalog.all().stream().anyMatch(s -> s.state() instanceof SandboxState.Standby);
                try {
                    swap.close(!inStandby);
                } catch (RuntimeException e) {
                    log.atWarn().addKeyValue("file", swap.file()).setCause(e).log("the standby swap file stays on");
                }
            });
        } catch (StasisException e) {
            log.atWarn().addKeyValue("reason", e.getMessage()).log("no standby swap file: standby keeps memory in RAM");
        }
    }

    /** The API's URL from this host: the bind address, or loopback when it binds every address. */
    /** The preview listener at the advertise URL's host: where the other nodes pass on preview requests for this node's sandboxes. */
    private static URI previewUrlOf(URI advertised, int previewPort) {
        return URI.create(advertised.getScheme() + "://" + advertised.getHost() + ":" + previewPort);
    }

    /** The largest volume a create may ask for (1 TiB); the pool is thin-provisioned. */
    static final long MAX_VOLUME_MB = 1L << 20;

    public static Daemon start(ServerConfig config) {
        return new Daemon(config);
    }

    public int port() {
        return http.port();
    }

    /** The API's routes as registered, for the test that holds them against openapi.yaml. */
    List<HttpApi.Route> routes() {
        return http.routes();
    }

    /** The preview listener's port. */
    public int previewPort() {
        return previewProxy.port();
    }

    public Path rootKeyFile() {
        return rootKeyFile;
    }

    /**
     * The runtimes behind one router: runc always; gVisor wherever runsc is there, even when new
     * sandboxes may not ask for it (--runtimes-allowed), so that the ones made before keep running.
     * gVisor keeps its images in runc's store: one store holds every image (see RuntimeRouter).
     */
    private RuntimeRouter openRuntimes(ServerConfig config, RuncConfig runc) {
        var engines = new EnumMap<RuntimeKind, SandboxRuntime>(RuntimeKind.class);
        engines.put(RuntimeKind.RUNC, register(new RuncRuntime(runc)));
        Path runsc = config.runtimes().runsc();
        if (Files.isExecutable(runsc))
            engines.put(RuntimeKind.GVISOR, register(new RunscRuntime(new RunscConfig(runsc, config.dataDir().resolve("runtime-gvisor"),
                    runc.cgroupParent(), runc.idMapBase(), runc.toolTimeout(), runc.stateDir()))));
        return new RuntimeRouter(engines, config.runtimes().defaultRuntime());
    }

    /**
     * Claims this instance's host-wide network names for as long as it runs. Another instance
     * (another data directory) that uses one of them would take over this one's table, links or
     * drop log: it is refused at start, with the flag to set.
     */
    private void claimHostNames(ServerConfig config) {
        var network = config.network().host();
        if (network.isEmpty()) return;
        var names = new LinkedHashMap<String, String>();
        names.put("--network-table", network.get().table());
        names.put("--network-interface-prefix", network.get().interfacePrefix());
        names.put("--network-range", network.get().range().toString());
        names.put("--network-log-group", Integer.toString(network.get().logGroup()));
        String holder = "the Stasis service with data directory " + config.dataDir() + " (pid " + ProcessHandle.current().pid() + ")";
        for (var name : names.entrySet()) {
            switch (HostClaim.take(HostClaim.HOST_DIR, name.getKey().substring(2), name.getValue(), holder)) {
                case HostClaim.Result.Claimed claimed -> register(claimed.claim());
                case HostClaim.Result.Taken taken -> throw new IllegalStateException(name.getKey() + " " + name.getValue()
                        + " is in use by " + taken.holder() + "; give this instance its own " + name.getKey()
                        + " (instances on one host each need their own --network-table, --network-interface-prefix,"
                        + " --network-range and --network-log-group)");
            }
        }
    }

    /** Host tools at a fraction of the service's CPU weight (see ToolCgroup); back to the service's cgroup at close. */
    private void runToolsInTheirCgroup() {
        var tools = ToolCgroup.open(Long.toString(ProcessHandle.current().pid()), ToolCgroup.DEFAULT_SHARES);
        ToolRunner.runToolsIn(tools);
        tools.ifPresent(cgroup -> register(() -> {
            ToolRunner.runToolsIn(Optional.empty());
            cgroup.close();
        }));
    }

    /** The crash tests' fault point: the process dies on the spot, as with SIGKILL (no shutdown hook runs). */
    private static FaultPoints dieAt(String step) {
        log.atWarn().addKeyValue("step", step).log("fault point armed: the service will kill itself there");
        return reached -> {
            if (reached.equals(step)) {
                log.atWarn().addKeyValue("step", step).log("fault point reached: halting");
                Runtime.getRuntime().halt(137);
            }
        };
    }

    /**
     * The host's bucket mounts under {@code <data-dir>/mounts}, owned by the sandboxes' root; empty
     * (and logged) where rclone or FUSE is missing: the service runs, a create with mounts is refused.
     */
    private static Optional<BucketMounts> openBucketMounts(ServerConfig config, FileOwner owner) {
        try {
            // the daemon's memory limit is what each mount counts in its tenant's quota
            var options = FuseBucketMounts.Options.DEFAULTS.withOwner(owner).withDaemonMemory((long) SandboxBuckets.DAEMON_MEMORY_MB << 20);
            return Optional.of(FuseBucketMounts.open(config.dataDir().resolve("mounts"), options));
        } catch (RuntimeException e) {
            log.atWarn().addKeyValue("reason", e.getMessage()).log("bucket mounts are not available (./stasis setup installs rclone and fuse3)");
            return Optional.empty();
        }
    }

    /** The durable store: a local directory (default {@code <data-dir>/blobs}) or an S3 bucket. Credentials are never logged. */
    private static BlobStore openBlobStore(ServerConfig config) {
        var blobs = config.blobs();
        if (blobs.kind().equals("local")) {
            var dir = blobs.localDir(config.dataDir());
            log.atInfo().addKeyValue("kind", "local").addKeyValue("dir", dir).log("blob store");
            return new LocalBlobStore(dir);
        }
        var credentials = blobs.s3Credentials().map(k -> new S3BlobStoreConfig.Credentials(k[0], k[1]));
        var s3 = new S3BlobStoreConfig(blobs.s3Endpoint(), blobs.s3Bucket().orElseThrow(), blobs.s3Region(), credentials,
                blobs.s3PathStyle(), blobs.s3KeyPrefix(), Duration.ofMinutes(5));
        log.atInfo().addKeyValue("kind", "s3").addKeyValue("endpoint", blobs.s3Endpoint().map(Object::toString).orElse("aws"))
                .addKeyValue("bucket", s3.bucket()).addKeyValue("credentials", credentials.isPresent() ? "access key" : "default chain")
                .log("blob store");
        return new S3BlobStore(s3);
    }

    /**
     * Where imported images wait while their layers are applied: on the data dir's disk (an image can
     * be gigabytes), emptied at every start (a spool a stop left is garbage).
     */
    private static Path imageSpool(ServerConfig config) throws IOException {
        Path spool = config.dataDir().resolve("image-spool");
        if (Files.exists(spool)) FileTrees.deleteRecursively(spool);
        Files.createDirectories(spool);
        return spool;
    }

    /** A start-up step's result; its failure as it was thrown. */
    private static <T> T resultOf(Future<T> step) throws Exception {
        try {
            return step.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception cause) throw cause;
            if (e.getCause() instanceof Error error) throw error;
            throw e;
        }
    }

    /** Start-up steps run side by side register what they open: one at a time. */
    private synchronized <T extends AutoCloseable> T register(T resource) {
        closeInReverse.addFirst(resource);
        return resource;
    }

    /**
     * Issues the root key on the first start, and again when its file is gone: deleting the file and
     * restarting is how an operator replaces the root key, so the old one is revoked then.
     */
    /**
     * Makes the root key if the catalog has none, and writes its secret to {@link #rootKeyFile}; a
     * file that is there already (a deployment's secret, mounted read-only) is made the root key
     * instead. On a catalog of this node alone, a lost file means a new key (the old one is revoked);
     * on a shared catalog the other nodes use the key, so a node without the file refuses to start.
     */
    private void ensureRootKey(Catalog catalog, Credentials credentials, boolean shared) throws IOException {
        boolean exists = catalog.hasRootKey();
        if (exists && Files.exists(rootKeyFile)) return;
        if (!exists && Files.exists(rootKeyFile)) {
            var adopted = credentials.adoptRoot(Files.readString(rootKeyFile, StandardCharsets.US_ASCII).strip());
            log.atInfo().addKeyValue("file", rootKeyFile).addKeyValue("keyId", adopted.id()).log("made the key in the file the root API key");
            return;
        }
        if (exists && shared)
            throw new StasisException(ErrorCode.INTERNAL, "the catalog has a root key, and " + rootKeyFile + " is missing: copy root.key from the"
                    + " node that made it (its data directory), or name it with --root-key-file; a new one would lock the other nodes out",
                    Map.of("file", rootKeyFile.toString()));
        if (exists) {
            log.atWarn().addKeyValue("file", rootKeyFile).log("a root key exists but its file is gone; revoking it and issuing another");
            catalog.apiKeysOf(TenantId.DEFAULT).stream().filter(ApiKey::root).forEach(k -> catalog.deleteApiKey(k.id()));
        }
        var issued = credentials.issueRoot();
        Path tmp = rootKeyFile.resolveSibling("root.key.tmp");
        Files.deleteIfExists(tmp);
        Files.createFile(tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.writeString(tmp, issued.secret() + "\n", StandardCharsets.US_ASCII, StandardOpenOption.TRUNCATE_EXISTING);
        Files.move(tmp, rootKeyFile, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        log.atInfo().addKeyValue("file", rootKeyFile).addKeyValue("keyId", issued.key().id()).log("created the root API key");
    }

    private static void requireRoot() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("Uid:") && !line.split("\\s+")[2].equals("0"))
                throw new IllegalStateException("the Stasis service must run as root (it manages namespaces, cgroups and btrfs)");
        }
    }

    /**
     * Stops serving. Sandboxes keep running; the btrfs pool is unmounted only if no sandbox root
     * remains (running sandboxes need it).
     */
    @Override
    public void close() {
        RuntimeException failure = null;
        for (AutoCloseable resource : closeInReverse) {
            try {
                if (resource == pool) pool.unmountIfEmpty();
                resource.close();
            } catch (Exception e) {
                if (failure == null) failure = new IllegalStateException("shutdown incomplete");
                failure.addSuppressed(e);
            }
        }
        closeInReverse.clear();
        if (failure != null) throw failure;
    }

    /**
     * The catalog: the SQLite file in the data directory, or the PostgreSQL database of
     * {@code --catalog}, into which the data directory's SQLite file (if any) moves at this start.
     */
    private static SqlCatalog openCatalog(ServerConfig config) {
        Path file = config.dataDir().resolve("stasis.db");
        if (config.catalog().isEmpty()) return SqlCatalog.openSqlite(file, EventRetention.DEFAULT, config.nodeName());
        var catalog = SqlCatalog.openPostgres(config.catalog().get(), EventRetention.DEFAULT, config.nodeName());
        try {
            SqliteToPostgres.moveIfPresent(file, catalog);
            return catalog;
        } catch (RuntimeException e) {
            catalog.close();
            throw e;
        }
    }

    /** Deletes every sandbox; for tests and the benchmark, which must leave nothing behind. */
    public void deleteAllSandboxes() {
        for (var sandbox : sandboxes.list(SandboxQuery.all()).items()) sandboxes.delete(sandbox.id().value());
    }

    public static void main(String[] args) {
        NodeForwarder.allowPassingTheHost();
        ServerConfig config;
        try {
            config = ServerConfig.parse(args);
        } catch (ServerConfig.UsageException | StasisException e) {
            if (!e.getMessage().isEmpty()) System.err.println("error: " + e.getMessage());
            System.err.print(ServerConfig.usage());
            System.exit(e.getMessage().isEmpty() ? 0 : 2);
            return;
        }
        Daemon daemon;
        try {
            daemon = start(config);
        } catch (RuntimeException e) {
            log.atError().setCause(e).log("could not start");
            System.err.println("error: could not start: " + e.getMessage());
            System.exit(1);
            return;
        }
        var stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            log.info("stopping (sandboxes keep running)");
            try {
                daemon.close();
            } finally {
                stopped.countDown();
            }
        }, "shutdown"));
        System.out.println("listening on http://" + config.bind() + ":" + daemon.port()
                + " (root API key in " + daemon.rootKeyFile() + ")");
        System.out.flush();
        // The service runs until it is stopped, not for as long as a library happens to keep a
        // thread that is not a daemon: the API serves on virtual threads, which keep no JVM alive.
        while (true) {
            try {
                stopped.await();
                return;
            } catch (InterruptedException e) {
                // nothing interrupts the main thread on purpose: wait on
            }
        }
    }
}
