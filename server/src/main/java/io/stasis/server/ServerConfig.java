package io.stasis.server;

import io.stasis.catalog.sql.PostgresLocation;
import io.stasis.core.node.NodeLimits;
import io.stasis.core.lifecycle.WarmPool;
import io.stasis.core.error.StasisException;
import io.stasis.core.network.Cidr;
import io.stasis.core.policy.Durations;
import io.stasis.core.policy.LifecyclePolicy;
import io.stasis.core.sandbox.Resources;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * Every setting of the service, each with its default. Parsed from command-line flags
 * ({@code --port 7070} or {@code --port=7070}); {@link #usage()} lists them.
 *
 * @param port             HTTP port (0 picks a free one)
 * @param bind             address to listen on
 * @param dataDir          where everything lives: catalog, btrfs image, runtime state, root key
 * @param btrfsMount       an existing btrfs filesystem to keep roots on, instead of a loop-mounted image
 * @param poolSizeBytes    size of the sparse image file when no btrfs mount is given
 * @param runc             the runc binary
 * @param criu             a CRIU >= 4.2 binary, if installed (checkpoints need it)
 * @param templateCache    where slow template builds are cached across data dirs
 * @param defaultTemplate  template of a sandbox created without one
 * @param defaultResources resources of a sandbox created without them
 * @param maxDiskMb        the largest disk a sandbox may have: a create's {@code resources.diskMb}, or a fork's or a checkpoint's disk
 * @param execOutputLimit  bytes of each output an exec result keeps
 * @param processOutputLimit bytes of each output a background process keeps (the oldest are dropped)
 * @param maxUploadBytes   largest file upload
 * @param templateWait     how long a create waits for a template's first build
 * @param buildSlowTemplates whether to build slow templates (base) at start-up, in the background
 * @param warmPool         started sandboxes kept ready per template, so that a create only hands one out: so many at
 *                         rest, more (up to its max) while creates and forks find none ready
 * @param forkSparesMax    forks of memory checkpoints kept restored ahead on this host, in all (checkpoints ask for them)
 * @param forkPageSharing  whether the processes CRIU restores (forks, resumes) have their identical pages merged by the
 *                         kernel (KSM): one tenant's hosts only (a side channel between sandboxes, docs/SECURITY.md)
 * @param defaultLifecycle idle policy of a sandbox created without one
 * @param idleCheck        how often idle policies are applied
 * @param network          sandbox networks and the default egress policy
 * @param previews         the preview listener: its port and the domain of preview URLs
 * @param faultPoint       a step at which the service kills itself (crash tests only; empty in use)
 * @param blobs            the durable store of checkpoints
 * @param buckets          bucket mounts: the endpoints they may reach, how long a stop waits for their uploads
 * @param standbySwapBytes size of the swap file (data-dir/standby.swap) that sandboxes in standby page out to; 0: none
 *                         (a standby then only freezes and drops the page cache)
 * @param warmUp           whether the start ends with one pass through the common calls ({@link WarmUp}), so
 *                         that the first calls after a start are not the slow ones (never with a fault point)
 * @param runtimes         which runtimes sandboxes run in (runc, gVisor)
 * @param catalog          a PostgreSQL database for the catalog; empty: the SQLite file data-dir/stasis.db
 * @param nodeName         this service's name among those sharing the catalog (the host name by default)
 * @param advertiseUrl     where the other nodes reach this one; empty: http://BIND:PORT once listening
 * @param rootKeyFile      where the root API key's secret is kept; empty: data-dir/root.key
 * @param nodeLease        how long a node stays alive to the others without renewing its lease (it renews every
 *                         third of it); a lost node's durable sandboxes are adopted one more lease after it lapsed
 * @param nodeLimits       what this node may hold at once (sandboxes with processes, their memory limits); none by default
 * @param rateLimits       the operator's rate limits on tenants and credentials; none by default
 * @param audit            the audit log's files: their size and how many are kept
 * @param metricsPublic    whether {@code GET /metrics} answers without a key (by default it needs the root key)
 */
public record ServerConfig(int port, String bind, Path dataDir, Optional<Path> btrfsMount, long poolSizeBytes,
                           Path runc, Optional<Path> criu, Path templateCache, String defaultTemplate,
                           Resources defaultResources, int maxDiskMb, long execOutputLimit, long processOutputLimit, long maxUploadBytes, Duration templateWait,
                           boolean buildSlowTemplates, WarmPool.Sizing warmPool, int forkSparesMax, boolean forkPageSharing, LifecyclePolicy defaultLifecycle, Duration idleCheck,
                           NetworkSettings network, PreviewSettings previews, Optional<String> faultPoint,
                           BlobSettings blobs, BucketSettings buckets, long standbySwapBytes, boolean warmUp,
                           RuntimeSettings runtimes, Optional<PostgresLocation> catalog, String nodeName, Optional<URI> advertiseUrl,
                           Optional<Path> rootKeyFile, Duration nodeLease, NodeLimits nodeLimits, RateLimitSettings rateLimits,
                           AuditSettings audit, boolean metricsPublic) {
    private static final Pattern NODE_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,62}");

    /** 64 GiB, the default pool's size: a sandbox is not promised more disk than the pool has. */
    public static final int DEFAULT_MAX_DISK_MB = 64 * 1024;

    public static ServerConfig defaults() {
        return new ServerConfig(7070, "127.0.0.1", Path.of("/var/lib/stasis"), Optional.empty(), 64L << 30,
                Path.of("/usr/sbin/runc"), defaultCriu(), Path.of("/var/cache/stasis/templates"), "base",
                Resources.DEFAULT, DEFAULT_MAX_DISK_MB, 16L << 20, 64L << 20, 10L << 30, Duration.ofMinutes(10), true, new WarmPool.Sizing(2, 8), 100, false, LifecyclePolicy.DEFAULT,
                Duration.ofSeconds(1), NetworkSettings.defaults(), PreviewSettings.defaults(), Optional.ofNullable(System.getenv("STASIS_FAULT_POINT")).filter(f -> !f.isBlank()),
                BlobSettings.defaults(), BucketSettings.defaults(), 8L << 30, true, RuntimeSettings.defaults(), Optional.empty(), defaultNodeName(),
                Optional.empty(), Optional.empty(), Duration.ofSeconds(15), NodeLimits.NONE, RateLimitSettings.NONE, AuditSettings.DEFAULTS, false);
    }

    /** The host name, as a node name may spell it. */
    private static String defaultNodeName() {
        String host;
        try {
            host = java.net.InetAddress.getLocalHost().getHostName();
        } catch (java.net.UnknownHostException e) {
            host = "stasis";
        }
        String name = host.replaceAll("[^A-Za-z0-9._-]", "-");
        return NODE_NAME.matcher(name).matches() ? name : "stasis";
    }

    private static Optional<Path> defaultCriu() {
        String env = System.getenv("STASIS_CRIU");
        if (env != null && !env.isBlank()) return Optional.of(Path.of(env));
        Path installed = Path.of("/opt/stasis/criu/criu");
        return Files.isExecutable(installed) ? Optional.of(installed) : Optional.empty();
    }

    /** Thrown for a flag that is unknown or has a bad value; the message says which. */
    public static final class UsageException extends RuntimeException {
        UsageException(String message) {
            super(message);
        }
    }

    public static ServerConfig parse(String... args) {
        var c = defaults();
        var list = new ArrayList<>(List.of(args));
        while (!list.isEmpty()) {
            String arg = list.removeFirst();
            if (arg.equals("--help") || arg.equals("-h")) throw new UsageException("");
            if (!arg.startsWith("--")) throw new UsageException("unexpected argument '" + arg + "'");
            String name = arg, value = null;
            int eq = arg.indexOf('=');
            if (eq > 0) {
                name = arg.substring(0, eq);
                value = arg.substring(eq + 1);
            }
            if (name.equals("--no-slow-templates")) {
                c = c.with(b -> b.buildSlowTemplates = false);
                continue;
            }
            if (name.equals("--no-warm-up")) {
                c = c.with(b -> b.warmUp = false);
                continue;
            }
            if (name.equals("--metrics-public")) {
                c = c.with(b -> b.metricsPublic = true);
                continue;
            }
            if (name.equals("--fork-page-sharing")) {
                c = c.with(b -> b.forkPageSharing = true);
                continue;
            }
            if (value == null && BlobSettings.isSwitch(name) && (list.isEmpty() || list.getFirst().startsWith("--"))) {
                var blobs = c.blobs().with(name, null);
                c = c.with(b -> b.blobs = blobs.orElseThrow());
                continue;
            }
            if (value == null) {
                if (list.isEmpty()) throw new UsageException(name + " needs a value");
                value = list.removeFirst();
            }
            final String v = value;
            final String flag = name;
            var network = c.network().with(name, value);
            if (network.isPresent()) {
                c = c.with(b -> b.network = network.get());
                continue;
            }
            var blobs = c.blobs().with(name, value);
            if (blobs.isPresent()) {
                c = c.with(b -> b.blobs = blobs.get());
                continue;
            }
            var runtimes = c.runtimes().with(name, value);
            if (runtimes.isPresent()) {
                c = c.with(b -> b.runtimes = runtimes.get());
                continue;
            }
            var audit = c.audit().with(name, value);
            if (audit.isPresent()) {
                c = c.with(b -> b.audit = audit.get());
                continue;
            }
            var rates = c.rateLimits().with(name, value);
            if (rates.isPresent()) {
                c = c.with(b -> b.rateLimits = rates.get());
                continue;
            }
            var preview = c.previews().with(name, value);
            if (preview.isPresent()) {
                c = c.with(b -> b.previews = preview.get());
                continue;
            }
            c = switch (name) {
                case "--port" -> c.with(b -> b.port = integer(flag, v, 0, 65535));
                case "--bind" -> c.with(b -> b.bind = v);
                case "--data-dir" -> c.with(b -> b.dataDir = Path.of(v).toAbsolutePath());
                case "--btrfs-mount" -> c.with(b -> b.btrfsMount = Optional.of(Path.of(v).toAbsolutePath()));
                case "--pool-size" -> c.with(b -> b.poolSizeBytes = size(flag, v));
                case "--runc" -> c.with(b -> b.runc = Path.of(v));
                case "--criu" -> c.with(b -> b.criu = v.isEmpty() ? Optional.empty() : Optional.of(Path.of(v)));
                case "--template-cache" -> c.with(b -> b.templateCache = Path.of(v).toAbsolutePath());
                case "--default-template" -> c.with(b -> b.defaultTemplate = v);
                case "--default-cpus" -> c.with(b -> b.defaultResources = new Resources(decimal(flag, v), b.defaultResources.memoryMb(), b.defaultResources.pids(), b.defaultResources.diskMb()));
                case "--default-memory-mb" -> c.with(b -> b.defaultResources = new Resources(b.defaultResources.cpus(), integer(flag, v, 16, 1 << 20), b.defaultResources.pids(), b.defaultResources.diskMb()));
                case "--default-pids" -> c.with(b -> b.defaultResources = new Resources(b.defaultResources.cpus(), b.defaultResources.memoryMb(), integer(flag, v, 16, 1_000_000), b.defaultResources.diskMb()));
                case "--default-disk-mb" -> c.with(b -> b.defaultResources = b.defaultResources.withDiskMb(integer(flag, v, Resources.MIN_DISK_MB, Resources.MAX_DISK_MB)));
                case "--max-disk-mb" -> c.with(b -> b.maxDiskMb = integer(flag, v, Resources.MIN_DISK_MB, Resources.MAX_DISK_MB));
                case "--exec-output-limit" -> c.with(b -> b.execOutputLimit = size(flag, v));
                case "--process-output-limit" -> c.with(b -> b.processOutputLimit = size(flag, v));
                case "--max-upload" -> c.with(b -> b.maxUploadBytes = size(flag, v));
                case "--bucket-endpoints-allow" -> c.with(b -> b.buckets = b.buckets.withEndpointsAllow(cidrs(flag, v)));
                case "--bucket-release-wait" -> c.with(b -> b.buckets = b.buckets.withReleaseWait(duration(flag, v)));
                case "--template-wait" -> c.with(b -> b.templateWait = duration(flag, v));
                case "--standby-swap" -> c.with(b -> b.standbySwapBytes = v.equals("0") ? 0 : size(flag, v));
                case "--warm-pool" -> c.with(b -> b.warmPool = new WarmPool.Sizing(integer(flag, v, 0, 100), b.warmPool.max()));
                case "--warm-pool-max" -> c.with(b -> b.warmPool = new WarmPool.Sizing(b.warmPool.floor(), integer(flag, v, 0, 100)));
                case "--fork-spares-max" -> c.with(b -> b.forkSparesMax = integer(flag, v, 0, 1000));
                case "--pause-after-idle" -> c.with(b -> b.lifecycle = policy(b.lifecycle, "pauseAfterIdle", optionalDuration(flag, v)));
                case "--standby-after-idle" -> c.with(b -> b.lifecycle = policy(b.lifecycle, "standbyAfterIdle", optionalDuration(flag, v)));
                case "--hibernate-after-idle" -> c.with(b -> b.lifecycle = policy(b.lifecycle, "hibernateAfterIdle", optionalDuration(flag, v)));
                case "--stop-after-idle" -> c.with(b -> b.lifecycle = policy(b.lifecycle, "stopAfterIdle", optionalDuration(flag, v)));
                case "--delete-after-idle" -> c.with(b -> b.lifecycle = policy(b.lifecycle, "deleteAfterIdle", optionalDuration(flag, v)));
                case "--max-age" -> c.with(b -> b.lifecycle = policy(b.lifecycle, "maxAge", optionalDuration(flag, v)));
                case "--checkpoint-every" -> c.with(b -> b.lifecycle = policy(b.lifecycle, "checkpointEvery", optionalDuration(flag, v)));
                case "--idle-check" -> c.with(b -> b.idleCheck = duration(flag, v));
                case "--catalog" -> c.with(b -> b.catalog = catalog(v));
                case "--node-name" -> c.with(b -> b.nodeName = nodeName(v));
                case "--advertise-url" -> c.with(b -> b.advertiseUrl = Optional.of(advertiseUrl(v)));
                case "--root-key-file" -> c.with(b -> b.rootKeyFile = Optional.of(Path.of(v).toAbsolutePath()));
                case "--node-lease" -> c.with(b -> b.nodeLease = nodeLease(flag, v));
                case "--node-max-sandboxes" -> c.with(b -> b.nodeLimits = new NodeLimits(integer(flag, v, 0, 1_000_000), b.nodeLimits.memoryMb()));
                case "--node-max-memory-mb" -> c.with(b -> b.nodeLimits = new NodeLimits(b.nodeLimits.runningSandboxes(), integer(flag, v, 0, Integer.MAX_VALUE)));
                default -> throw new UsageException("unknown flag " + name);
            };
        }
        if (c.blobs().kind().equals("s3") && c.blobs().s3Bucket().isEmpty())
            throw new UsageException("--blob-store s3 needs --s3-bucket");
        if (c.defaultResources().diskMb() > c.maxDiskMb())
            throw new UsageException("--default-disk-mb " + c.defaultResources().diskMb() + " is above --max-disk-mb " + c.maxDiskMb());
        c.runtimes().checked();
        return c;
    }

    public static String usage() {
        return """
                Usage: stasis up [flags]   (or: java -jar stasis-server.jar [flags])
                  --port N                 HTTP port (default 7070; 0 picks a free port)
                  --bind ADDR              address to listen on (default 127.0.0.1)
                  --data-dir DIR           data directory (default /var/lib/stasis)
                  --catalog URL            keep the catalog in PostgreSQL: postgresql://USER[:PASSWORD]@HOST[:PORT]/DB
                                           (the password may come from $PGPASSWORD instead); default: the SQLite
                                           file DATA-DIR/stasis.db, which the first start on PostgreSQL moves into
                                           an empty database (kept as stasis.db.moved-to-postgresql)
                  --node-name NAME         this service's name among the nodes sharing a catalog (default: the host
                                           name); each node's sandboxes stay its own across restarts
                  --advertise-url URL      where the other nodes reach this one (default http://BIND:PORT)
                  --root-key-file PATH     the root API key's secret (default DATA-DIR/root.key); on a shared
                                           catalog, every node needs the copy the first node wrote
                  --node-lease DURATION    a node not heard of for this long is gone to the others (default 15s,
                                           at least 3s); its durably hibernated sandboxes move to another node
                                           one more lease later
                  --node-max-sandboxes N   sandboxes with processes (running, paused, standby) this node holds at
                                           once; more get 503 host_busy, and creates go to nodes with room
                                           (default 0: no limit)
                  --node-max-memory-mb N   the same for their memory limits added up (default 0: no limit; creates
                                           still go where the most of the host's memory is left)
                  --btrfs-mount DIR        keep sandbox roots on this existing btrfs filesystem
                  --pool-size SIZE         size of the sparse btrfs image otherwise (default 64G)
                  --runc PATH              runc binary (default /usr/sbin/runc)
                  --criu PATH              CRIU >= 4.2 (default $STASIS_CRIU or /opt/stasis/criu/criu)
                  --template-cache DIR     cache of slow template builds (default /var/cache/stasis/templates)
                  --default-template NAME  template when a create names none (default base)
                  --default-cpus X         default CPU limit (default 1)
                  --default-memory-mb N    default memory limit (default 1024)
                  --default-pids N         default pids limit (default 512)
                  --default-disk-mb N      default room in MiB for what a sandbox writes itself
                                           (its template's files not counted; default 10240)
                  --max-disk-mb N          largest disk of a sandbox (created, forked or from a checkpoint), in MiB (default 65536)
                  --exec-output-limit SIZE bytes of each output an exec result keeps (default 16M)
                  --process-output-limit SIZE  bytes of each output a background process keeps;
                                           older output is dropped, offsets stay valid (default 64M)
                  --max-upload SIZE        largest file upload (default 10G)
                  --template-wait DURATION how long a create waits for a template's first build (default 10m)
                  --no-slow-templates      do not build slow templates (base) at start-up
                  --warm-pool N            started sandboxes kept ready per template (default 2; 0: none)
                  --warm-pool-max N        while creates and forks find none ready, up to N per template; back
                                           to --warm-pool after 2 minutes without (default 8; never below --warm-pool)
                  --fork-spares-max N      forks of memory checkpoints kept restored ahead, in standby, on this
                                           host in all; a checkpoint asks for its own (default 100; 0: none)
                  --fork-page-sharing      restored processes (forks, resumes) have their identical pages merged
                                           by the kernel (KSM, turned on while the service runs): less memory
                                           for forks, but a side channel between sandboxes: one tenant only
                  --standby-swap SIZE      swap file for sandboxes in standby, in the data directory (default 8G;
                                           0: none, a standby then keeps its memory in RAM)
                  --no-warm-up             skip the pass through the common calls that ends a start
                                           (the first calls after a start are then slower)
                  --metrics-public         GET /metrics answers without a key (by default: the root key only)
                  --pause-after-idle D     default idle policy of new sandboxes (D: a duration or "never"):
                  --standby-after-idle D     pause 15s, standby 2m, hibernate 1h, stop never, delete 30d,
                  --hibernate-after-idle D   max age never
                  --stop-after-idle D
                  --delete-after-idle D
                  --max-age D
                  --checkpoint-every D     default durability of new sandboxes: a durable checkpoint with memory
                                           this often while running, for another node to resume them from
                                           (default never)
                  --idle-check DURATION    how often idle policies are applied (default 1s)
                """ + BucketSettings.USAGE + """
                """ + RuntimeSettings.USAGE + """
                """ + NetworkSettings.USAGE + """
                """ + PreviewSettings.USAGE + """
                """ + BlobSettings.USAGE + """
                """ + RateLimitSettings.USAGE + """
                """ + AuditSettings.USAGE + """
                SIZE: bytes or with K, M, G, T. DURATION: 500ms, 30s, 10m, 2h.
                """;
    }

    private ServerConfig with(Consumer<Builder> change) {
        var b = new Builder(this);
        change.accept(b);
        return b.build();
    }

    private static List<Cidr> cidrs(String flag, String v) {
        try {
            return Arrays.stream(v.split(",")).map(String::strip).filter(x -> !x.isEmpty()).map(x -> Cidr.parse(x, flag)).toList();
        } catch (StasisException e) {
            throw new UsageException(e.getMessage());
        }
    }

    private static Optional<PostgresLocation> catalog(String v) {
        if (v.isEmpty() || v.equals("sqlite")) return Optional.empty();
        try {
            return Optional.of(PostgresLocation.parse(v, Optional.ofNullable(System.getenv("PGPASSWORD"))));
        } catch (IllegalArgumentException e) {
            throw new UsageException("--catalog: " + e.getMessage());
        }
    }

    private static String nodeName(String v) {
        if (!NODE_NAME.matcher(v).matches())
            throw new UsageException("--node-name must be 1-63 of A-Z a-z 0-9 . _ -, starting with a letter or digit, was '" + v + "'");
        return v;
    }

    private static URI advertiseUrl(String v) {
        try {
            var uri = new URI(v);
            if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) || uri.getHost() == null
                    || (uri.getPath() != null && !uri.getPath().isEmpty() && !uri.getPath().equals("/")) || uri.getQuery() != null)
                throw new URISyntaxException(v, "not http(s)://HOST[:PORT]");
            return URI.create(uri.getScheme() + "://" + uri.getRawAuthority());
        } catch (URISyntaxException e) {
            throw new UsageException("--advertise-url must be http://HOST[:PORT] (or https), was '" + v + "'");
        }
    }

    private static Duration nodeLease(String flag, String v) {
        var lease = duration(flag, v);
        if (lease.compareTo(Duration.ofSeconds(3)) < 0) throw new UsageException(flag + " must be at least 3s, was '" + v + "'");
        return lease;
    }

    static int integer(String flag, String v, int min, int max) {
        try {
            int n = Integer.parseInt(v);
            if (n < min || n > max) throw new NumberFormatException();
            return n;
        } catch (NumberFormatException e) {
            throw new UsageException(flag + " must be an integer between " + min + " and " + max + ", was '" + v + "'");
        }
    }

    private static double decimal(String flag, String v) {
        try {
            return Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw new UsageException(flag + " must be a number, was '" + v + "'");
        }
    }

    static long size(String flag, String v) {
        String s = v.strip().toUpperCase(Locale.ROOT);
        if (s.endsWith("B")) s = s.substring(0, s.length() - 1);
        long unit = 1;
        if (!s.isEmpty()) {
            switch (s.charAt(s.length() - 1)) {
                case 'K' -> unit = 1L << 10;
                case 'M' -> unit = 1L << 20;
                case 'G' -> unit = 1L << 30;
                case 'T' -> unit = 1L << 40;
                default -> unit = 1;
            }
            if (unit > 1) s = s.substring(0, s.length() - 1);
        }
        try {
            long n = Long.parseLong(s);
            if (n < 0) throw new NumberFormatException();
            return Math.multiplyExact(n, unit);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new UsageException(flag + " must be a size such as 512M or 64G, was '" + v + "'");
        }
    }

    static Duration duration(String flag, String v) {
        try {
            return Durations.parse(flag, v);
        } catch (StasisException e) {
            throw new UsageException(flag + " must be a duration such as 30s or 10m, was '" + v + "'");
        }
    }

    private static Optional<Duration> optionalDuration(String flag, String v) {
        return v.equals("never") || v.equals("null") ? Optional.empty() : Optional.of(duration(flag, v));
    }

    private static LifecyclePolicy policy(LifecyclePolicy p, String field, Optional<Duration> d) {
        return new LifecyclePolicy(
                field.equals("pauseAfterIdle") ? d : p.pauseAfterIdle(),
                field.equals("standbyAfterIdle") ? d : p.standbyAfterIdle(),
                field.equals("hibernateAfterIdle") ? d : p.hibernateAfterIdle(),
                field.equals("stopAfterIdle") ? d : p.stopAfterIdle(),
                field.equals("deleteAfterIdle") ? d : p.deleteAfterIdle(),
                field.equals("maxAge") ? d : p.maxAge(),
                p.autoResume(),
                field.equals("checkpointEvery") ? d : p.checkpointEvery());
    }

    /** Mutable copy used only while parsing. */
    private static final class Builder {
        int port;
        String bind;
        Path dataDir;
        Optional<Path> btrfsMount;
        long poolSizeBytes;
        Path runc;
        Optional<Path> criu;
        Path templateCache;
        String defaultTemplate;
        Resources defaultResources;
        int maxDiskMb;
        long execOutputLimit;
        long processOutputLimit;
        long maxUploadBytes;
        Duration templateWait;
        boolean buildSlowTemplates;
        WarmPool.Sizing warmPool;
        int forkSparesMax;
        boolean forkPageSharing;
        LifecyclePolicy lifecycle;
        Duration idleCheck;
        NetworkSettings network;
        PreviewSettings previews;
        Optional<String> faultPoint;
        BlobSettings blobs;
        BucketSettings buckets;
        long standbySwapBytes;
        boolean warmUp;
        RuntimeSettings runtimes;
        Optional<PostgresLocation> catalog;
        String nodeName;
        Optional<URI> advertiseUrl;
        Optional<Path> rootKeyFile;
        Duration nodeLease;
        NodeLimits nodeLimits;
        RateLimitSettings rateLimits;
        AuditSettings audit;
        boolean metricsPublic;

        Builder(ServerConfig c) {
            port = c.port;
            bind = c.bind;
            dataDir = c.dataDir;
            btrfsMount = c.btrfsMount;
            poolSizeBytes = c.poolSizeBytes;
            runc = c.runc;
            criu = c.criu;
            templateCache = c.templateCache;
            defaultTemplate = c.defaultTemplate;
            defaultResources = c.defaultResources;
            maxDiskMb = c.maxDiskMb;
            execOutputLimit = c.execOutputLimit;
            processOutputLimit = c.processOutputLimit;
            maxUploadBytes = c.maxUploadBytes;
            templateWait = c.templateWait;
            buildSlowTemplates = c.buildSlowTemplates;
            warmPool = c.warmPool;
            forkSparesMax = c.forkSparesMax;
            forkPageSharing = c.forkPageSharing;
            lifecycle = c.defaultLifecycle;
            idleCheck = c.idleCheck;
            network = c.network;
            previews = c.previews;
            faultPoint = c.faultPoint;
            blobs = c.blobs;
            buckets = c.buckets;
            standbySwapBytes = c.standbySwapBytes;
            warmUp = c.warmUp;
            runtimes = c.runtimes;
            catalog = c.catalog;
            nodeName = c.nodeName;
            advertiseUrl = c.advertiseUrl;
            rootKeyFile = c.rootKeyFile;
            nodeLease = c.nodeLease;
            nodeLimits = c.nodeLimits;
            rateLimits = c.rateLimits;
            audit = c.audit;
            metricsPublic = c.metricsPublic;
        }

        ServerConfig build() {
            return new ServerConfig(port, bind, dataDir, btrfsMount, poolSizeBytes, runc, criu, templateCache,
                    defaultTemplate, defaultResources, maxDiskMb, execOutputLimit, processOutputLimit, maxUploadBytes, templateWait, buildSlowTemplates, warmPool, forkSparesMax, forkPageSharing, lifecycle, idleCheck, network, previews, faultPoint, blobs,
                    buckets, standbySwapBytes, warmUp, runtimes, catalog, nodeName, advertiseUrl, rootKeyFile, nodeLease, nodeLimits, rateLimits, audit, metricsPublic);
        }
    }
}
