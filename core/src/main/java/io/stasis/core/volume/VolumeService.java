package io.stasis.core.volume;

import io.stasis.core.concurrent.KeyedLock;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.FileOwner;
import io.stasis.core.spi.RuntimeSpec;
import io.stasis.core.spi.VolumeArchive;
import io.stasis.core.spi.VolumeCatalog;
import io.stasis.core.spi.VolumeStore;
import io.stasis.core.tenant.QuotaGuard;
import io.stasis.core.tenant.TenantId;
import io.stasis.core.tenant.TenantUsage;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Volumes of tenants: create (empty, from a snapshot, from a sync in the blob store), list, delete,
 * snapshots, syncs, and the mounts sandboxes ask for.
 *
 * <p><b>Sharing.</b> A volume may be mounted by any number of sandboxes at once, each read-write
 * or read-only. All of them see one directory tree on one host filesystem, so they see each
 * other's writes at once, with the kernel's usual semantics: no coordination is added between
 * sandboxes (last writer wins; use rename for atomic replacement, or {@code flock} on a file of
 * the volume, which the kernel enforces across sandboxes of one host too). A fork mounts the same
 * volumes, with the same modes, as its parent.
 */
public final class VolumeService implements SandboxVolumes {
    private static final Logger log = LoggerFactory.getLogger(VolumeService.class);
    private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9._-]{0,62}");
    private static final Pattern SEGMENT = Pattern.compile("[A-Za-z0-9._@+=~-]{1,255}");
    private static final List<String> RESERVED = List.of("/proc", "/dev", "/sys", "/.stasis", "/etc/resolv.conf");
    public static final long DEFAULT_SIZE_MB = 10_240;
    public static final long MIN_SIZE_MB = 16;
    public static final int MAX_MOUNTS = 16;
    /** Where sync records are, under the archive's records: {@code volume-syncs/<vsync>}. */
    public static final String SYNC_RECORDS = VolumeSyncs.SYNC_RECORDS;

    private final VolumeCatalog catalog;
    private final VolumeStore store;
    private final VolumeSyncs syncs;
    private final FileOwner owner;
    private final Clock clock;
    private final long maxSizeMb;
    private final KeyedLock<VolumeId> locks = new KeyedLock<>();
    /** A name is claimed from the check that it is free until the volume is in the catalog. */
    private final KeyedLock<String> names = new KeyedLock<>();

    private final QuotaGuard quotas;

    public VolumeService(VolumeCatalog catalog, VolumeStore store, VolumeArchive archive, FileOwner owner, Clock clock, long maxSizeMb,
                         QuotaGuard quotas) {
        this.quotas = quotas;
        this.catalog = catalog;
        this.store = store;
        this.syncs = new VolumeSyncs(catalog, store, archive, clock);
        this.owner = owner;
        this.clock = clock;
        this.maxSizeMb = maxSizeMb;
    }

    /** Where a new volume's content comes from. */
    public sealed interface Source {
        record Empty() implements Source {
        }

        record FromSnapshot(String snapshot) implements Source {
        }

        /** A sync id, or a volume id whose latest sync is meant; looked up in the blob store. */
        record FromSync(String ref) implements Source {
        }
    }

    /**
     * Creates a volume.
     * <p>Effects on success: the volume exists on this host and in the catalog.
     * <p>On failure: {@code name_taken}, {@code invalid_request}, {@code volume_snapshot_not_found},
     * {@code volume_sync_not_found}, {@code runtime_failed}; nothing of it remains.
     */
    public Volume create(TenantId tenant, String name, Optional<Long> sizeMb, Source source) {
        validateName(name);
        sizeMb.ifPresent(this::validateSize);
        try (var claim = names.tryExclusive(tenant.value() + "/" + name).orElseThrow(() -> StasisException.nameTaken(name))) {
            if (catalog.findVolumeByName(tenant, name).isPresent()) throw StasisException.nameTaken(name);
            // The size first: a volume counts toward its tenant's diskMb quota like a sandbox's disk.
            long size = switch (source) {
                case Source.Empty e -> sizeMb.orElse(DEFAULT_SIZE_MB);
                case Source.FromSnapshot s -> sizeMb.orElseGet(() -> catalog.findVolume(snapshotOf(tenant, s.snapshot()).volume())
                        .orElseThrow(() -> snapshotNotFound(s.snapshot())).sizeMb());
                case Source.FromSync s -> sizeMb.orElseGet(() -> syncs.archived(s.ref()).sizeMb());
            };
            return quotas.admit(tenant, new TenantUsage(0, 0, size), () -> make(tenant, name, size, source));
        }
    }

    private Volume make(TenantId tenant, String name, long size, Source source) {
        var id = VolumeId.random();
        long start = System.nanoTime();
        Volume volume = switch (source) {
            case Source.Empty e -> {
                store.create(id, size << 20, owner);
                yield new Volume(id, tenant, name, size, clock.instant(), Optional.empty());
            }
            case Source.FromSnapshot s -> {
                var snapshot = snapshotOf(tenant, s.snapshot());
                store.createFrom(id, snapshot.id(), size << 20);
                yield new Volume(id, tenant, name, size, clock.instant(), Optional.of(snapshot.id().value()));
            }
            case Source.FromSync s -> syncs.restore(id, tenant, name, size, s.ref());
        };
        try {
            catalog.insertVolume(volume);
        } catch (RuntimeException e) {
            try {
                store.delete(id);
            } catch (RuntimeException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
        log.atInfo().addKeyValue("volume", id).addKeyValue("tenant", tenant).addKeyValue("sizeMb", volume.sizeMb())
                .addKeyValue("origin", volume.origin().orElse("empty")).addKeyValue("ms", (System.nanoTime() - start) / 1_000_000)
                .log("volume created");
        return volume;
    }

    private void validateName(String name) {
        if (name == null) throw StasisException.invalid("name", "is required");
        if (!NAME.matcher(name).matches())
            throw StasisException.invalid("name", "must be 1-63 characters of a-z, 0-9, '.', '_', '-', starting with a letter or digit, was '"
                    + name + "'");
        if (name.startsWith(VolumeId.PREFIX)) throw StasisException.invalid("name", "must not start with '" + VolumeId.PREFIX + "' (reserved for ids)");
    }

    private void validateSize(long sizeMb) {
        if (sizeMb < MIN_SIZE_MB || sizeMb > maxSizeMb)
            throw StasisException.invalid("sizeMb", "must be " + MIN_SIZE_MB + " to " + maxSizeMb + " MiB on this server, was " + sizeMb);
    }

    /** A volume of the tenant, by id or name; {@code volume_not_found} for anything else, other tenants' included. */
    public Volume get(TenantId tenant, String ref) {
        Optional<Volume> found = VolumeId.isValid(ref) ? catalog.findVolume(new VolumeId(ref)) : catalog.findVolumeByName(tenant, ref);
        return found.filter(v -> v.tenant().equals(tenant)).orElseThrow(() -> notFound(ref));
    }

    /** For token checks: the volume by id, whatever its tenant. */
    public Optional<Volume> find(VolumeId id) {
        return catalog.findVolume(id);
    }

    public List<Volume> list(TenantId tenant) {
        return catalog.volumesOf(tenant);
    }

    public List<VolumeCatalog.Mounter> mounters(VolumeId id) {
        return catalog.mountersOf(id);
    }

    /**
     * Deletes a volume with its snapshots (its syncs stay in the blob store).
     * <p>Prerequisites: no sandbox mounts it, unless {@code force}: then {@code stop} stops each
     * sandbox that does and the mount is removed from it (it starts without the volume).
     * <p>On failure: {@code invalid_state} naming the sandboxes that mount it; nothing changes.
     */
    public void delete(TenantId tenant, String ref, boolean force, Consumer<SandboxId> stop) {
        var volume = get(tenant, ref);
        withLock(volume.id(), () -> {
            var mounters = catalog.mountersOf(volume.id());
            if (!mounters.isEmpty() && !force) {
                var ids = mounters.stream().map(m -> m.sandbox().value()).distinct().toList();
                throw new StasisException(ErrorCode.INVALID_STATE, "volume " + volume.name() + " (" + volume.id() + ") is mounted by "
                        + String.join(", ", ids) + "; delete those sandboxes first, or pass force=true to stop them and remove the mount",
                        Map.of("volume", volume.id().value(), "mountedBy", ids));
            }
            for (var sandbox : new HashSet<>(mounters.stream().map(VolumeCatalog.Mounter::sandbox).toList())) {
                stop.accept(sandbox);
                var kept = catalog.mountsOf(sandbox).stream().filter(m -> !m.volume().equals(volume.id())).toList();
                catalog.setMounts(sandbox, kept);
            }
            for (var snapshot : catalog.volumeSnapshotsOf(volume.id())) store.deleteSnapshot(snapshot.id());
            for (var sync : catalog.volumeSyncsOf(volume.id())) store.deleteSyncSnapshot(sync.id());
            store.delete(volume.id());
            catalog.deleteVolume(volume.id());
            log.atInfo().addKeyValue("volume", volume.id()).addKeyValue("forced", !mounters.isEmpty()).log("volume deleted");
            return null;
        });
    }

    // --- mounts ---

    /** A mount as a caller asks for it. */
    public record MountRequest(String volume, String path, boolean readOnly) {
    }

    /**
     * Checks the mounts a new sandbox asks for: each volume is the tenant's, each path absolute,
     * plain (no {@code .}, {@code ..} or empty segment), not {@code /} and not over {@code /proc},
     * {@code /dev}, {@code /sys}, {@code /.stasis} or {@code /etc/resolv.conf}, and no path equal
     * to or inside another. {@code invalid_request} naming the field otherwise;
     * {@code volume_not_found} for a volume that is not the tenant's.
     */
    public List<VolumeMount> resolveMounts(TenantId tenant, List<MountRequest> requests) {
        if (requests.size() > MAX_MOUNTS) throw StasisException.invalid("volumes", "at most " + MAX_MOUNTS + " mounts, was " + requests.size());
        var out = new ArrayList<VolumeMount>();
        for (int i = 0; i < requests.size(); i++) {
            var r = requests.get(i);
            String field = "volumes[" + i + "]";
            if (r.volume() == null) throw StasisException.invalid(field + ".volume", "is required");
            String path = validatePath(field + ".path", r.path());
            for (var other : out) {
                if (path.equals(other.path()) || path.startsWith(other.path() + "/") || other.path().startsWith(path + "/"))
                    throw StasisException.invalid(field + ".path", "'" + path + "' overlaps the mount at '" + other.path() + "'");
            }
            out.add(new VolumeMount(get(tenant, r.volume()).id(), path, r.readOnly()));
        }
        return out;
    }

    /** Checks a mount path inside a sandbox (volumes and bucket mounts alike); returns it. */
    public static String validatePath(String field, String path) {
        if (path == null) throw StasisException.invalid(field, "is required");
        if (!path.startsWith("/") || path.equals("/"))
            throw StasisException.invalid(field, "must be an absolute path below '/', was '" + path + "'");
        if (path.length() > 1024) throw StasisException.invalid(field, "must be at most 1024 characters");
        for (String segment : path.substring(1).split("/", -1)) {
            if (segment.equals(".") || segment.equals("..") || !SEGMENT.matcher(segment).matches())
                throw StasisException.invalid(field, "must be a plain absolute path (segments of A-Z a-z 0-9 . _ @ + = ~ -, no '.', '..' or"
                        + " empty segment), was '" + path + "'");
        }
        for (String reserved : RESERVED) {
            if (path.equals(reserved) || path.startsWith(reserved + "/"))
                throw StasisException.invalid(field, "must not be at or below " + reserved + ", was '" + path + "'");
        }
        return path;
    }

    @Override
    public List<VolumeMount> mountsOf(SandboxId sandbox) {
        return catalog.mountsOf(sandbox);
    }

    @Override
    public void setMounts(SandboxId sandbox, List<VolumeMount> mounts) {
        catalog.setMounts(sandbox, mounts);
    }

    @Override
    public List<RuntimeSpec.Mount> hostMounts(List<VolumeMount> mounts) {
        var out = new ArrayList<RuntimeSpec.Mount>();
        for (var m : mounts) {
            Path source = store.path(m.volume()).orElseThrow(() -> new StasisException(ErrorCode.INVALID_STATE,
                    "volume " + m.volume() + " (mounted at " + m.path() + ") does not exist on this host", Map.of("volume", m.volume().value())));
            out.add(new RuntimeSpec.Mount(source, m.path(), m.readOnly()));
        }
        return out;
    }

    /** Where the volume's files are on this host (for the S3 endpoint's confined file access). */
    public Path hostPath(VolumeId id) {
        return store.path(id).orElseThrow(() -> new StasisException(ErrorCode.INVALID_STATE, "volume " + id + " does not exist on this host",
                Map.of("volume", id.value())));
    }

    // --- snapshots ---

    /** An O(1) read-only snapshot of the volume: every write completed before the call is in it. */
    public VolumeSnapshot snapshot(TenantId tenant, String ref) {
        var volume = get(tenant, ref);
        return withLock(volume.id(), () -> {
            var snapshot = new VolumeSnapshot(VolumeSnapshotId.random(), volume.id(), clock.instant());
            store.snapshot(volume.id(), snapshot.id());
            try {
                catalog.insertVolumeSnapshot(snapshot);
            } catch (RuntimeException e) {
                try {
                    store.deleteSnapshot(snapshot.id());
                } catch (RuntimeException cleanup) {
                    e.addSuppressed(cleanup);
                }
                throw e;
            }
            return snapshot;
        });
    }

    public List<VolumeSnapshot> snapshots(TenantId tenant, String ref) {
        return catalog.volumeSnapshotsOf(get(tenant, ref).id());
    }

    public VolumeSnapshot snapshot(TenantId tenant, String ref, String snapshotRef) {
        var volume = get(tenant, ref);
        var snapshot = snapshotOf(tenant, snapshotRef);
        if (!snapshot.volume().equals(volume.id())) throw snapshotNotFound(snapshotRef);
        return snapshot;
    }

    public void deleteSnapshot(TenantId tenant, String ref, String snapshotRef) {
        var snapshot = snapshot(tenant, ref, snapshotRef);
        store.deleteSnapshot(snapshot.id());
        catalog.deleteVolumeSnapshot(snapshot.id());
    }

    private VolumeSnapshot snapshotOf(TenantId tenant, String ref) {
        if (!VolumeSnapshotId.isValid(ref)) throw snapshotNotFound(ref);
        var snapshot = catalog.findVolumeSnapshot(new VolumeSnapshotId(ref)).orElseThrow(() -> snapshotNotFound(ref));
        var volume = catalog.findVolume(snapshot.volume());
        if (volume.isEmpty() || !volume.get().tenant().equals(tenant)) throw snapshotNotFound(ref);
        return snapshot;
    }

    // --- syncs (VolumeSyncs) ---

    /**
     * Makes the volume's current content durable: a read-only snapshot, its {@code btrfs send}
     * stream (incremental to the previous sync's snapshot where that is still here) stored in the
     * archive, then the sync's record. Returns once all of it is durable. Syncs of one volume take
     * turns.
     */
    public VolumeSync sync(TenantId tenant, String ref) {
        var volume = get(tenant, ref);
        return withLock(volume.id(), () -> syncs.sync(volume));
    }

    public List<VolumeSync> syncs(TenantId tenant, String ref) {
        return catalog.volumeSyncsOf(get(tenant, ref).id());
    }

    /** Deletes one of the volume's syncs from the blob store ({@link VolumeSyncs#delete}). */
    public void deleteSync(TenantId tenant, String ref, String syncRef) {
        var volume = get(tenant, ref);
        withLock(volume.id(), () -> {
            syncs.delete(volume, syncRef);
            return null;
        });
    }

    /**
     * Removes what a crash left on this host that the catalog does not know: volumes of a create
     * that died half-way, snapshots taken but never recorded, and sync snapshots other than each
     * volume's newest recorded one (a sync that died before its record, or after it but before the
     * previous snapshot was let go).
     */
    public void reconcile() {
        var volumes = catalog.allVolumes();
        var known = new HashSet<VolumeId>();
        var snapshots = new HashSet<VolumeSnapshotId>();
        var syncBases = new HashSet<VolumeSyncId>();
        for (var volume : volumes) {
            known.add(volume.id());
            catalog.volumeSnapshotsOf(volume.id()).forEach(s -> snapshots.add(s.id()));
            catalog.volumeSyncsOf(volume.id()).stream().map(VolumeSync::id).filter(store::hasSyncSnapshot).reduce((a, b) -> b)
                    .ifPresent(syncBases::add);
        }
        for (var id : store.list()) {
            if (known.contains(id)) continue;
            log.atWarn().addKeyValue("volume", id).log("removing a volume the catalog does not know (a create interrupted by a crash)");
            store.delete(id);
        }
        for (var id : store.snapshots()) {
            if (snapshots.contains(id)) continue;
            log.atWarn().addKeyValue("snapshot", id).log("removing a volume snapshot the catalog does not know (interrupted by a crash)");
            store.deleteSnapshot(id);
        }
        for (var id : store.syncSnapshots()) {
            if (syncBases.contains(id)) continue;
            log.atWarn().addKeyValue("sync", id).log("removing a sync snapshot that is no volume's newest recorded sync (a sync interrupted by a crash)");
            store.deleteSyncSnapshot(id);
        }
    }

    private <T> T withLock(VolumeId id, Supplier<T> work) {
        return locks.exclusive(id, work);
    }

    public static StasisException notFound(String ref) {
        return new StasisException(ErrorCode.VOLUME_NOT_FOUND, "no volume with id or name '" + ref + "'", Map.of("volume", ref));
    }

    static StasisException snapshotNotFound(String ref) {
        return new StasisException(ErrorCode.VOLUME_SNAPSHOT_NOT_FOUND, "no volume snapshot '" + ref + "'", Map.of("snapshot", ref));
    }

    /** The stream ids a sync record names: its whole chain, oldest first. {@code internal} if it does not parse. */
    public static List<String> syncStreams(byte[] record) {
        return VolumeSyncRecord.decode(record).streams();
    }
}
