package io.stasis.core.bucket;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.BucketCatalog;
import io.stasis.core.spi.BucketCredentials;
import io.stasis.core.spi.BucketMount;
import io.stasis.core.spi.BucketMountId;
import io.stasis.core.spi.BucketMounts;
import io.stasis.core.spi.MountedBucket;
import io.stasis.core.spi.OwnedBucketMount;
import io.stasis.core.spi.RuntimeSpec;
import io.stasis.core.tenant.TenantId;
import io.stasis.core.volume.VolumeMount;
import io.stasis.core.volume.VolumeService;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the sandbox services ask of bucket mounts: check a create's {@code mounts}, mount a
 * sandbox's buckets on the host before its processes start or come back (create, start, resume
 * from hibernation, fork), let go of them when no process can use them (stop, hibernate, delete),
 * and reconcile what a crash left.
 *
 * <p>Each bucket of a sandbox is one host mount, id {@code <sandbox id>-<index>} (see
 * {@link SandboxBucket#mountId}), bound into the sandbox at its path by the runtime like a volume.
 * The key is read from the tenant's secret at each mount and goes to the FUSE daemon on the host
 * only (see {@link BucketMounts}); the sandbox sees files.
 */
public final class SandboxBuckets {
    private static final Logger log = LoggerFactory.getLogger(SandboxBuckets.class);
    /** At most this many bucket mounts per sandbox (each is a daemon on the host). */
    public static final int MAX_MOUNTS = 8;
    /**
     * The memory each mount's daemon may use on the host (its cgroup's limit), counted in its
     * sandbox's tenant's memory while the sandbox has processes.
     */
    public static final int DAEMON_MEMORY_MB = 128;

    private final Optional<BucketMounts> mounts;
    private final BucketCatalog catalog;
    private final BiFunction<TenantId, String, Optional<String>> secretValue;
    private final BucketEndpoints endpoints;
    private final Duration releaseWait;
    /** Mounts their sandbox let go of with uploads still pending, and how many: kept on the host until those are up ({@link #drain}). */
    private final Map<BucketMountId, Integer> draining = new ConcurrentHashMap<>();

    /**
     * @param mounts      the host's bucket mounts; empty where they are not available (no rclone or
     *                    {@code /dev/fuse}): a create asking for one is refused then
     * @param secretValue the value of a tenant's secret by name, if it exists
     * @param endpoints   which endpoints a mount may reach, checked before every mount
     * @param releaseWait how long {@link #release} waits for a mount's uploads before it leaves them to the background
     */
    public SandboxBuckets(Optional<BucketMounts> mounts, BucketCatalog catalog, BiFunction<TenantId, String, Optional<String>> secretValue,
                          BucketEndpoints endpoints, Duration releaseWait) {
        this.mounts = mounts;
        this.catalog = catalog;
        this.secretValue = secretValue;
        this.endpoints = endpoints;
        this.releaseWait = releaseWait;
    }

    /**
     * Checks a create's {@code mounts} (type, endpoint, bucket, prefix, path, the secret: it exists
     * and holds a key) against each other and the sandbox's volumes; {@code invalid_request}
     * naming the field ({@code mounts[1].path}) otherwise. Reads the secrets, mounts nothing.
     */
    public List<SandboxBucket> resolve(TenantId tenant, List<BucketMountRequest> requests, List<VolumeMount> volumes) {
        if (requests.isEmpty()) return List.of();
        if (mounts.isEmpty())
            throw StasisException.invalid("mounts", "bucket mounts are not available on this server (they need rclone and /dev/fuse:"
                    + " ./stasis setup installs them)");
        if (requests.size() > MAX_MOUNTS) throw StasisException.invalid("mounts", "at most " + MAX_MOUNTS + " mounts, was " + requests.size());
        var taken = new LinkedHashMap<String, String>(); // path -> what is mounted there
        for (var v : volumes) taken.put(v.path(), "the volume mount at '" + v.path() + "'");
        var out = new ArrayList<SandboxBucket>();
        for (int i = 0; i < requests.size(); i++) {
            var r = requests.get(i);
            String field = "mounts[" + i + "]";
            if (r == null) throw StasisException.invalid(field, "must be an object");
            if (!SandboxBucket.TYPE_S3.equals(r.type()))
                throw StasisException.invalid(field + ".type", "must be \"s3\" (the only kind of mount), was " + quoted(r.type()));
            String path = VolumeService.validatePath(field + ".path", r.path());
            taken.forEach((other, what) -> {
                if (path.equals(other) || path.startsWith(other + "/") || other.startsWith(path + "/"))
                    throw StasisException.invalid(field + ".path", "'" + path + "' overlaps " + what);
            });
            taken.put(path, "the bucket mount at '" + path + "'");
            if (r.endpoint() == null) throw StasisException.invalid(field + ".endpoint", "is required, e.g. https://s3.eu-west-1.amazonaws.com");
            URI endpoint;
            try {
                endpoint = new URI(r.endpoint());
            } catch (URISyntaxException e) {
                throw StasisException.invalid(field + ".endpoint", "must be an http or https URL, was " + quoted(r.endpoint()));
            }
            if (r.credentialsSecret() == null) throw StasisException.invalid(field + ".credentialsSecret", "is required: the name of a secret"
                    + " (POST /v1/secrets) whose value is ACCESS_KEY_ID:SECRET_ACCESS_KEY");
            var bucket = new SandboxBucket(path, endpoint, r.region() == null ? BucketMount.DEFAULT_REGION : r.region(), r.bucket(),
                    r.prefix() == null ? "" : stripSlashes(r.prefix()), Boolean.TRUE.equals(r.readOnly()), r.credentialsSecret());
            // The mount's own checks (endpoint, region, bucket, prefix, key), named after this entry.
            inField(field, () -> bucket.toMount(new BucketMountId("check"), credentials(tenant, bucket, field)));
            endpoints.check(field + ".endpoint", endpoint);
            out.add(bucket);
        }
        return out;
    }

    /** The buckets the sandbox mounts, as recorded. */
    public List<SandboxBucket> bucketsOf(SandboxId sandbox) {
        return catalog.bucketsOf(sandbox);
    }

    /** Records the sandbox's bucket mounts (before its own record, as volumes are). */
    public void record(SandboxId sandbox, List<SandboxBucket> buckets) {
        if (!buckets.isEmpty()) catalog.setBuckets(sandbox, buckets);
    }

    /**
     * Makes sure each of the sandbox's buckets is mounted on the host (those mounted already are
     * kept) and returns the bind mounts for the runtime, in order.
     * <p>On failure: {@code bucket_mount_failed} naming the mount and quoting the FUSE client's
     * reason (wrong endpoint, key or bucket), or {@code invalid_request} if the secret is gone or
     * malformed; what this call mounted is unmounted again (nothing was written through it).
     */
    public List<RuntimeSpec.Mount> mount(SandboxId sandbox, TenantId tenant, List<SandboxBucket> buckets) {
        if (buckets.isEmpty()) return List.of();
        var host = available();
        var out = new ArrayList<RuntimeSpec.Mount>();
        var made = new ArrayList<BucketMountId>();
        try {
            for (int i = 0; i < buckets.size(); i++) {
                var bucket = buckets.get(i);
                var id = SandboxBucket.mountId(sandbox, i);
                var live = host.mounted(id);
                draining.remove(id); // a mount still uploading for this sandbox is its own again
                if (live.isEmpty()) {
                    String field = "mounts[" + i + "]";
                    var spec = inField(field, () -> bucket.toMount(id, credentials(tenant, bucket, field)));
                    // again: what the name resolves to may have changed; the mount connects to what is checked now, and only to that
                    spec = spec.withAddresses(endpoints.check(field + ".endpoint", bucket.endpoint()));
                    live = Optional.of(mountOrExplain(host, spec, field, bucket));
                    made.add(id);
                }
                out.add(new RuntimeSpec.Mount(live.get().hostPath(), bucket.path(), bucket.readOnly()));
            }
            return out;
        } catch (RuntimeException e) {
            for (var id : made.reversed()) unmountQuietly(host, id, BucketMounts.Flush.DISCARD, e);
            throw e;
        }
    }

    /** {@link #mount(SandboxId, TenantId, List)} of the buckets recorded for the sandbox. */
    public List<RuntimeSpec.Mount> mountRecorded(Sandbox sandbox) {
        return mount(sandbox.id(), sandbox.tenant(), bucketsOf(sandbox.id()));
    }

    /**
     * Unmounts the sandbox's buckets once what was written through them is uploaded: its
     * processes are gone (deleted, stopped) or in an image (hibernated), and the next start mounts
     * them again. Waits at most the release wait: a mount whose uploads are still pending then
     * (its endpoint is slow or down) stays on the host, its daemon uploading and retrying, until
     * {@link #drain} finds them up; {@link #pendingUploads} tells how many, and the next mount of
     * the sandbox takes it back as it is. A mount whose daemon died with uploads pending is kept
     * and logged; the reconciler mounts it again at the next start of the service.
     */
    public void release(SandboxId sandbox) {
        forEachMount(sandbox, (host, id) -> {
            draining.remove(id);
            int pending = host.unmountOnceUploaded(id, releaseWait);
            if (pending == 0) return;
            draining.put(id, pending);
            log.atWarn().addKeyValue("sandbox", sandbox).addKeyValue("mount", id).addKeyValue("pendingUploads", pending)
                    .addKeyValue("waitedMs", releaseWait.toMillis()).log("bucket uploads still pending: they go on in the background");
        }, "bucket mount kept: its uploads could not be flushed (retried at the next start of the service)");
    }

    /**
     * Files written through the sandbox's bucket mount {@code index} still being uploaded after
     * the sandbox let go of it (stop, hibernate, delete); 0 once they are up, and while the
     * sandbox's processes use it.
     */
    public int pendingUploads(SandboxId sandbox, int index) {
        return draining.getOrDefault(SandboxBucket.mountId(sandbox, index), 0);
    }

    /**
     * The background half of {@link #release}: unmounts each mount left with uploads pending once
     * they are up, and counts what is still pending. {@code underLock} runs its action under the
     * owning sandbox's lock, so a start that took the mount back meanwhile keeps it.
     */
    public void drain(Function<SandboxId, Optional<Sandbox>> sandboxes, BiConsumer<SandboxId, Runnable> underLock) {
        if (mounts.isEmpty()) return;
        for (var id : List.copyOf(draining.keySet())) {
            var owner = ownerOf(id);
            if (owner.isEmpty()) {
                draining.remove(id);
                continue;
            }
            underLock.accept(owner.get(), () -> {
                if (owner.flatMap(sandboxes).filter(s -> s.state().hasProcesses()).isPresent()) {
                    draining.remove(id); // its sandbox runs again, with this mount
                    return;
                }
                try {
                    int pending = mounts.get().unmountOnceUploaded(id, Duration.ZERO);
                    if (pending > 0) {
                        draining.put(id, pending);
                        return;
                    }
                    draining.remove(id);
                    log.atInfo().addKeyValue("mount", id).log("bucket uploads done in the background: mount removed");
                } catch (RuntimeException e) {
                    draining.remove(id);
                    log.atWarn().addKeyValue("mount", id).setCause(e).log("bucket mount kept: its uploads could not finish (retried at the next start)");
                }
            });
        }
    }

    /**
     * Uploads what the sandbox has written and closed through its bucket mounts, keeping them
     * mounted: before a fork, whose own mounts see the bucket, not this sandbox's cache. A mount
     * that cannot be flushed is logged; the fork then misses what it holds.
     */
    public void flush(SandboxId sandbox) {
        forEachMount(sandbox, BucketMounts::flush, "bucket mount not flushed before a fork: the fork does not see what is still pending");
    }

    /** Runs {@code action} on each of the sandbox's host mounts; a failure is logged with {@code failure} and the next goes on. */
    private void forEachMount(SandboxId sandbox, BiConsumer<BucketMounts, BucketMountId> action, String failure) {
        int count = bucketsOf(sandbox).size();
        if (count == 0 || mounts.isEmpty()) return;
        for (int i = 0; i < count; i++) {
            var id = SandboxBucket.mountId(sandbox, i);
            try {
                action.accept(mounts.get(), id);
            } catch (RuntimeException e) {
                log.atWarn().addKeyValue("sandbox", sandbox).addKeyValue("mount", id).setCause(e).log(failure);
            }
        }
    }

    /**
     * Unmounts the recorded buckets without waiting for uploads: for a sandbox whose start, restore
     * or fork failed before anything ran in it. Failures go into {@code cause} as suppressed.
     */
    public void discard(SandboxId sandbox, RuntimeException cause) {
        discard(sandbox, bucketsOf(sandbox).size(), cause);
    }

    /** {@link #discard(SandboxId, RuntimeException)} of the first {@code count}: for a create, whose buckets may not be recorded yet. */
    public void discard(SandboxId sandbox, int count, RuntimeException cause) {
        if (count == 0 || mounts.isEmpty()) return;
        for (int i = 0; i < count; i++) unmountQuietly(mounts.get(), SandboxBucket.mountId(sandbox, i), BucketMounts.Flush.DISCARD, cause);
    }

    /**
     * Refuses ({@code checkpoint_unsupported}) while a process holds a file or directory open
     * under one of the sandbox's bucket mounts. CRIU would record it by path on the external
     * mount and reopen it at restore through a new FUSE mount; a file open for writing is not
     * even uploaded yet. Not supported: the sandbox is left running as it was.
     */
    public void requireNothingOpen(SandboxId sandbox, String action) {
        var buckets = bucketsOf(sandbox);
        if (buckets.isEmpty() || mounts.isEmpty()) return;
        for (int i = 0; i < buckets.size(); i++) {
            var open = mounts.get().openFiles(SandboxBucket.mountId(sandbox, i));
            if (!open.isEmpty())
                throw new StasisException(ErrorCode.CHECKPOINT_UNSUPPORTED, "sandbox " + sandbox + " cannot " + action + " now: "
                        + open.size() + " files or directories are open under its bucket mount at " + buckets.get(i).path() + " ("
                        + String.join(", ", open.subList(0, Math.min(3, open.size()))) + "); close them (a shell's working directory"
                        + " counts) and try again", Map.of("sandbox", sandbox.value(), "path", buckets.get(i).path()));
        }
    }

    /**
     * After a restart: keeps the mounts of sandboxes with live processes (mounting again those whose
     * daemon died, so their pending uploads resume) and unmounts every other mount this service left
     * (of sandboxes deleted, stopped or hibernated meanwhile), at once if nothing is pending, else
     * by {@link #drain} once its live daemon has uploaded it (the start does not wait for an
     * endpoint that is down). A dead daemon's pending files are kept for the next start.
     *
     * <p>A sandbox whose daemon died keeps a dead bind mount ({@code ENOTCONN}) until it is stopped
     * and started, or hibernated and resumed: the new FUSE mount is not propagated into its mount
     * namespace.
     */
    public void reconcile(Function<SandboxId, Optional<Sandbox>> sandboxes) {
        if (mounts.isEmpty()) return;
        var host = mounts.get();
        for (var owned : host.listOwned()) {
            var owner = ownerOf(owned.id()).flatMap(sandboxes);
            int index = indexOf(owned.id());
            var buckets = owner.map(s -> bucketsOf(s.id())).orElse(List.of());
            boolean wanted = owner.isPresent() && owner.get().state().hasProcesses() && index < buckets.size();
            try {
                if (!wanted && owned.pendingUploads() > 0 && owned.state() == OwnedBucketMount.State.ACTIVE) {
                    // uploads pending (the endpoint may be down): the start does not wait for them; drain unmounts it once they are up
                    draining.put(owned.id(), owned.pendingUploads());
                    log.atInfo().addKeyValue("mount", owned.id()).addKeyValue("pendingUploads", owned.pendingUploads())
                            .log("a bucket mount no sandbox uses still uploads: removed once that is done");
                } else if (!wanted) {
                    // WAIT only where something is pending (a dead daemon's files: kept, and logged below): the settle it costs
                    // otherwise would delay the start for nothing
                    host.unmount(owned.id(), owned.pendingUploads() > 0 ? BucketMounts.Flush.WAIT : BucketMounts.Flush.DISCARD);
                    log.atInfo().addKeyValue("mount", owned.id()).addKeyValue("state", owned.state()).log("removed a bucket mount no sandbox uses");
                } else if (owned.state() != OwnedBucketMount.State.ACTIVE) {
                    var sandbox = owner.get();
                    var bucket = buckets.get(index);
                    String field = "mounts[" + index + "]";
                    host.mount(bucket.toMount(owned.id(), credentials(sandbox.tenant(), bucket, field))
                            .withAddresses(endpoints.check(field + ".endpoint", bucket.endpoint())));
                    log.atWarn().addKeyValue("sandbox", sandbox.id()).addKeyValue("mount", owned.id()).addKeyValue("was", owned.state())
                            .log("bucket mount made again on the host; the sandbox sees it after a stop and start (or hibernate and resume)");
                }
            } catch (RuntimeException e) {
                log.atWarn().addKeyValue("mount", owned.id()).addKeyValue("state", owned.state()).setCause(e).log("bucket mount not reconciled");
            }
        }
    }

    private BucketMounts available() {
        return mounts.orElseThrow(() -> StasisException.invalid("mounts", "bucket mounts are not available on this server"));
    }

    private BucketCredentials credentials(TenantId tenant, SandboxBucket bucket, String field) {
        String name = bucket.credentialsSecret();
        var value = secretValue.apply(tenant, name).orElseThrow(() -> StasisException.invalid(field + ".credentialsSecret",
                "no secret named '" + name + "' (create it with POST /v1/secrets, value ACCESS_KEY_ID:SECRET_ACCESS_KEY)"));
        return BucketCredentials.fromSecretValue(name, value);
    }

    private static MountedBucket mountOrExplain(BucketMounts host, BucketMount spec, String field, SandboxBucket bucket) {
        try {
            return host.mount(spec);
        } catch (StasisException e) {
            if (e.code() != ErrorCode.RUNTIME_FAILED) throw e;
            var details = new LinkedHashMap<String, Object>(e.details());
            details.put("field", field);
            throw new StasisException(ErrorCode.BUCKET_MOUNT_FAILED, field + ": bucket '" + spec.bucketPath() + "' at " + spec.endpoint()
                    + " could not be mounted at " + bucket.path() + ": " + e.getMessage(), details, e);
        }
    }

    /** Renames a mount check's field ({@code mounts.bucket}) after the entry it is about ({@code mounts[0].bucket}). */
    private static <T> T inField(String field, Supplier<T> check) {
        try {
            return check.get();
        } catch (StasisException e) {
            Object named = e.details().get("field");
            if (e.code() != ErrorCode.INVALID_REQUEST || !(named instanceof String f) || !f.startsWith("mounts.")) throw e;
            String renamed = field + f.substring("mounts".length());
            String problem = e.getMessage().startsWith(f + ": ") ? e.getMessage().substring(f.length() + 2) : e.getMessage();
            throw StasisException.invalid(renamed, problem);
        }
    }

    private static void unmountQuietly(BucketMounts host, BucketMountId id, BucketMounts.Flush flush, RuntimeException cause) {
        try {
            host.unmount(id, flush);
        } catch (RuntimeException e) {
            cause.addSuppressed(e);
        }
    }

    /** The sandbox a host mount id names ({@code <sandbox id>-<index>}), if it has that shape. */
    static Optional<SandboxId> ownerOf(BucketMountId id) {
        int dash = id.value().lastIndexOf('-');
        if (dash <= 0 || indexOf(id) < 0) return Optional.empty();
        String sandbox = id.value().substring(0, dash);
        return SandboxId.isValid(sandbox) ? Optional.of(new SandboxId(sandbox)) : Optional.empty();
    }

    static int indexOf(BucketMountId id) {
        String tail = id.value().substring(id.value().lastIndexOf('-') + 1);
        if (tail.isEmpty() || tail.length() > 3 || !tail.chars().allMatch(Character::isDigit)) return -1;
        return Integer.parseInt(tail);
    }

    private static String quoted(String s) {
        return s == null ? "missing" : "'" + s + "'";
    }

    private static String stripSlashes(String prefix) {
        String p = prefix;
        while (p.startsWith("/")) p = p.substring(1);
        while (p.endsWith("/")) p = p.substring(0, p.length() - 1);
        return p;
    }
}
