package io.stasis.bench;

import io.stasis.sdk.CreateSandboxRequest;
import io.stasis.sdk.Sandbox;
import io.stasis.sdk.StasisClient;
import io.stasis.sdk.TemplateInfo;
import io.stasis.server.Daemon;
import io.stasis.server.ServerConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

/**
 * A Stasis service in this JVM on a scratch data directory (its own btrfs image, catalog and
 * runtime state), reached over loopback HTTP with the SDK like any user. Closing it deletes every
 * sandbox, stops the service, checks that nothing is left on the host and removes the directory.
 */
final class PrivateService implements AutoCloseable {
    private static final Duration TEMPLATE_WAIT = Duration.ofMinutes(10);
    /**
     * How long a stop waits for the host to let go of what the service released: killed processes
     * reaped by process 1, and the pool's loop device, which a lazy unmount frees only once btrfs has
     * written back and closed (seen to take over 10 s on a loaded machine).
     */
    private static final Duration REAP_WAIT = Duration.ofSeconds(30);
    private static final Duration REQUEST_TIMEOUT = Duration.ofMinutes(5);

    private final Path dataDir;
    private final Daemon daemon;
    private final StasisClient client;
    private final LiveApi live;
    private final Optional<Path> criu;
    private final BenchNetwork network;
    private final Set<String> sandboxIds = ConcurrentHashMap.newKeySet();
    private final Deque<AutoCloseable> attachments = new ConcurrentLinkedDeque<>();
    private final AtomicBoolean closed = new AtomicBoolean();

    private PrivateService(Path dataDir, Daemon daemon, StasisClient client, LiveApi live, Optional<Path> criu, BenchNetwork network) {
        this.dataDir = dataDir;
        this.daemon = daemon;
        this.client = client;
        this.live = live;
        this.criu = criu;
        this.network = network;
    }

    /**
     * @param processOutputLimit bytes of each output a background process keeps (the service's
     *                           {@code --process-output-limit}): at least what the output
     *                           scenarios write, so that no follower loses any to the limit
     */
    static PrivateService start(Progress progress, long processOutputLimit) throws IOException {
        return start(progress, processOutputLimit, List.of());
    }

    /**
     * A service with more flags than the benchmark's own: another instance beside it (a blob store
     * shared with it, no warm pool...). Close it like the first; until then it has its own data
     * directory, pool, catalog and network names.
     */
    static PrivateService start(Progress progress, long processOutputLimit, List<String> moreFlags) throws IOException {
        Path dataDir = Files.createTempDirectory("stasis-bench-");
        // Sandbox roots map to uid 100000, which must be able to traverse down to them.
        Files.setPosixFilePermissions(dataDir, PosixFilePermissions.fromString("rwx--x--x"));
        progress.say("starting a private service on %s", dataDir);
        Daemon daemon;
        ServerConfig config;
        var network = BenchNetwork.forDataDir(dataDir);
        try {
            // No idle policy: a sandbox waiting between two series must not be paused or hibernated
            // behind the benchmark's back; no background upload of every checkpoint either (the blob
            // scenarios ask for durable ones). A network layout and preview port of its own: a
            // developer's service may be running on this host.
            var flags = new ArrayList<>(List.of("--port", "0", "--data-dir", dataDir.toString(), "--pool-size", "16G",
                    "--default-template", "tiny", "--pause-after-idle", "never", "--hibernate-after-idle", "never",
                    "--checkpoint-uploads", "on-request", "--process-output-limit", Long.toString(processOutputLimit)));
            flags.addAll(network.flags());
            flags.addAll(moreFlags);
            config = ServerConfig.parse(flags.toArray(String[]::new));
            daemon = Daemon.start(config);
        } catch (RuntimeException | Error e) {
            // A start that failed half-way (an Error such as a NoSuchMethodError from mismatched
            // builds included) may have left the pool mounted: never delete through a mount.
            var mounts = Leftovers.mountsUnder(dataDir);
            if (mounts.isEmpty()) deleteTree(dataDir);
            else e.addSuppressed(new IllegalStateException("the failed start left " + mounts + "; " + dataDir + " was kept"));
            throw e;
        }
        String key = Files.readString(daemon.rootKeyFile()).strip();
        String url = "http://127.0.0.1:" + daemon.port();
        var client = StasisClient.builder().url(url).apiKey(key).requestTimeout(REQUEST_TIMEOUT).build();
        progress.say("service listening on 127.0.0.1:%d", daemon.port());
        return new PrivateService(dataDir, daemon, client, new LiveApi(url, key, REQUEST_TIMEOUT), config.criu(), network);
    }

    StasisClient client() {
        return client;
    }

    /** The service's root API key. */
    String rootKey() {
        try {
            return Files.readString(daemon.rootKeyFile()).strip();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    Path dataDir() {
        return dataDir;
    }

    /** The service's blob store when it has the default one: a directory of its data directory. */
    Path defaultBlobDir() {
        return dataDir.resolve("blobs");
    }

    /** The service's network layout and the benchmark's upstream host address. */
    BenchNetwork network() {
        return network;
    }

    /** The preview listener's port (on 127.0.0.1). */
    int previewPort() {
        return daemon.previewPort();
    }

    /** The live-state calls (pause, hibernate, checkpoints, forks), over plain HTTP. */
    LiveApi live() {
        return live;
    }

    /** The CRIU binary the service checkpoints with; empty when none is installed. */
    Optional<Path> criu() {
        return criu;
    }

    /** Creates a running sandbox through the API and remembers its id for the leak check. */
    Sandbox create(String template) {
        return create(CreateSandboxRequest.builder().template(template).build());
    }

    Sandbox create(CreateSandboxRequest request) {
        requireOpen();
        Sandbox sandbox = client.sandboxes().create(request);
        sandboxIds.add(sandbox.id());
        return sandbox;
    }

    /** Forks {@code count} sandboxes from a checkpoint and remembers their ids for the leak check. */
    List<String> fork(String sandboxId, String checkpointId, int count) {
        requireOpen();
        List<String> ids = live.fork(sandboxId, checkpointId, count);
        sandboxIds.addAll(ids);
        return ids;
    }

    /** Deletes a sandbox through the API (its checkpoints go with it). */
    void delete(String sandboxId) {
        client.sandboxes().delete(sandboxId);
    }

    /** Stops a scenario that goes on while a shutdown hook tears the service down. */
    void requireOpen() {
        if (closed.get()) throw new IllegalStateException("the benchmark is stopping");
    }

    /** The read-only subvolume a template's sandboxes are snapshots of. */
    Path templateSubvolume(String template) {
        return dataDir.resolve("btrfs/templates").resolve(template);
    }

    /** The OCI bundle configuration the runtime wrote for a sandbox: runc's, or gVisor's (the same shape). */
    Path bundleConfig(String sandboxId) {
        Path gvisor = dataDir.resolve("runtime-gvisor/bundles").resolve(sandboxId).resolve("config.json");
        return Files.exists(gvisor) ? gvisor : dataDir.resolve("runtime/bundles").resolve(sandboxId).resolve("config.json");
    }

    /** A sandbox's root subvolume. */
    Path sandboxRoot(String sandboxId) {
        return btrfsMount().resolve("roots").resolve(sandboxId);
    }

    /** The read-only root snapshot of a checkpoint. */
    Path checkpointRoot(String checkpointId) {
        return btrfsMount().resolve("checkpoints").resolve(checkpointId);
    }

    /** The CRIU image of a memory checkpoint. */
    Path checkpointImage(String checkpointId) {
        return dataDir.resolve("runtime/images").resolve(checkpointId);
    }

    /** Where the btrfs pool is mounted: snapshots for the floors must be made on it. */
    Path btrfsMount() {
        return dataDir.resolve("btrfs");
    }

    /** The cgroup of a sandbox below each controller (the service's layout: {@code /stasis/<id>}). */
    static String cgroupOf(String sandboxId) {
        return "/stasis/" + sandboxId;
    }

    /**
     * Something made on the side (the floors' containers and subvolumes) that must go before the
     * service stops, also when the run is interrupted; {@link #detach} once it is cleaned up.
     */
    void attach(AutoCloseable resource) {
        attachments.push(resource);
    }

    void detach(AutoCloseable resource) {
        attachments.remove(resource);
    }

    /** Waits until every template is ready; {@code base} is unpacked from the host's cache at start. */
    void awaitTemplates(List<String> names, Progress progress) {
        long deadline = System.nanoTime() + TEMPLATE_WAIT.toNanos();
        String last = "";
        while (true) {
            var templates = client.templates().list();
            var pending = templates.stream().filter(t -> names.contains(t.name()) && !t.isReady()).toList();
            var failed = pending.stream().filter(TemplateInfo::isFailed).toList();
            if (!failed.isEmpty())
                throw new IllegalStateException("template " + failed.getFirst().name() + " failed: " + failed.getFirst().message());
            var missing = names.stream().filter(n -> templates.stream().noneMatch(t -> t.name().equals(n))).toList();
            if (!missing.isEmpty()) throw new IllegalStateException("the service has no template " + missing);
            if (pending.isEmpty()) return;
            String status = pending.stream().map(t -> t.name() + " " + t.status()
                    + (t.progress() == null ? "" : " " + Math.round(t.progress() * 100) + "%")).toList().toString();
            if (!status.equals(last)) progress.say("waiting for templates: %s", status);
            last = status;
            if (System.nanoTime() > deadline) throw new IllegalStateException("templates not ready after " + TEMPLATE_WAIT + ": " + status);
            LockSupport.parkNanos(200_000_000);
        }
    }

    /**
     * Deletes every sandbox, stops the service, then checks the host: no mount, loop device, cgroup
     * or live process of this run may remain. The scratch directory goes only once nothing is
     * mounted in it. Idempotent: a shutdown hook may call it while the run is interrupted.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) return;
        RuntimeException failure = null;
        for (AutoCloseable attached = attachments.poll(); attached != null; attached = attachments.poll()) {
            try {
                attached.close();
            } catch (Exception e) {
                failure = collect(failure, e instanceof RuntimeException r ? r : new IllegalStateException(e));
            }
        }
        try {
            daemon.deleteAllSandboxes();
        } catch (RuntimeException e) {
            failure = collect(failure, e);
        }
        client.close();
        live.close();
        try {
            daemon.close();
        } catch (RuntimeException e) {
            failure = collect(failure, e);
        }
        var cgroups = sandboxIds.stream().map(PrivateService::cgroupOf).toList();
        List<String> left = leftovers(cgroups);
        long deadline = System.nanoTime() + REAP_WAIT.toNanos();
        while (!left.isEmpty() && System.nanoTime() < deadline) {
            // Killed sandbox processes are reaped by the host's process 1, sometimes a moment later.
            LockSupport.parkNanos(100_000_000);
            left = leftovers(cgroups);
        }
        if (Leftovers.mountsUnder(dataDir).isEmpty()) {
            try {
                deleteTree(dataDir);
            } catch (UncheckedIOException e) {
                failure = collect(failure, e);
            }
        }
        if (!left.isEmpty()) {
            var leak = new IllegalStateException("the benchmark left things on the host: " + left);
            if (failure != null) leak.addSuppressed(failure);
            throw leak;
        }
        if (failure != null) throw failure;
    }

    /** What the host still holds of this instance: {@link Leftovers}, and its nftables table and link interfaces. */
    private List<String> leftovers(List<String> cgroups) {
        var left = new ArrayList<>(Leftovers.find(dataDir, cgroups, sandboxIds));
        Leftovers.networkOf(network.table(), network.interfacePrefix()).forEach(left::add);
        return left;
    }

    private static RuntimeException collect(RuntimeException first, RuntimeException next) {
        if (first == null) return next;
        first.addSuppressed(next);
        return first;
    }

    static void deleteTree(Path dir) {
        if (!Files.exists(dir)) return;
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        } catch (IOException e) {
            throw new UncheckedIOException("removing " + dir, e);
        }
    }
}
