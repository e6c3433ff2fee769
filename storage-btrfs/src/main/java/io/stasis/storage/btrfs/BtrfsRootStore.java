package io.stasis.storage.btrfs;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.FileOwner;
import io.stasis.core.spi.RootStore;
import io.stasis.core.spi.StreamReader;
import io.stasis.core.spi.TemplateImage;
import io.stasis.core.spi.TemplateRecipe;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link RootStore} on a {@link BtrfsPool}. Layout:
 * <pre>
 * templates/&lt;name&gt;          read-only subvolume, files owned by the sandbox's mapped root
 * templates/&lt;name&gt;.json     {name, version, builtAt, sizeBytes}
 * templates/.build-&lt;name&gt;-X a template being built (removed on failure and at start)
 * templates/.old-&lt;name&gt;-X   the version being replaced (removed once the new one is in place)
 * roots/&lt;sandboxId&gt;         writable snapshot of a template or of a checkpoint: a sandbox's root filesystem
 * roots/&lt;sandboxId&gt;.replaced a root put aside by {@link #replaceRoot} (removed once the sandbox left it)
 * checkpoints/&lt;checkpointId&gt; read-only snapshot of a sandbox's root, taken for a checkpoint
 * roots/*.lineage, checkpoints/*.lineage   which subvolumes each descends from ({@link Lineage})
 * </pre>
 * Snapshots and deletions go through the btrfs ioctls (about as fast as the kernel allows, no
 * process spawned) and fall back to the {@code btrfs} CLI where native access is not permitted.
 * Every snapshot is its own subvolume sharing extents copy-on-write: deleting a checkpoint's
 * snapshot leaves the roots branched from it intact, and deleting a root leaves its snapshots.
 * Thread-safe.
 *
 * <p><b>Disk limits</b> are btrfs simple quotas (squota): the constructor puts the pool in that
 * mode ({@link PoolQuotas}: idempotent; a pool with full qgroup accounting, as made before, is
 * switched), and every root gets a limit on its own level-0 qgroup right after its snapshot is
 * made, before anything runs in it. Under simple quotas an extent is charged to the subvolume that
 * wrote it and to no other, so the limit is the room a sandbox has for what it writes itself, like
 * a container's writable layer: the files it shares with its template or the checkpoint it was
 * branched from are charged to whoever wrote them, and deleting them frees nothing; what it wrote
 * stays charged to it while a checkpoint's snapshot still holds it, even once deleted in the root,
 * until that checkpoint is deleted. Snapshots do not inherit limits under simple quotas: every root
 * gets its own; templates and checkpoint snapshots have none (nothing writes into them). Once a root
 * is deleted, what it wrote that its checkpoints and the roots branched from them still hold is
 * charged to one of those roots, its heir, within its limit ({@link #settleInheritedCharges}). Where
 * simple quotas are unavailable the pool keeps full quotas, and the same limit then also counts
 * the files a root shares (a WARN says so at open).
 *
 * <p>Limitation: btrfs snapshots do not descend into nested subvolumes. If a sandbox made one
 * inside its root (no privilege needed), a checkpoint's snapshot holds an empty directory in its
 * place, and so does every root branched from that checkpoint.
 */
public final class BtrfsRootStore implements RootStore {
    private static final Logger log = LoggerFactory.getLogger(BtrfsRootStore.class);

    private final Subvolumes subvolumes;
    private final PoolQuotas.Outcome quotas;
    private final TemplateImages templates;
    private final SandboxRoots roots;
    private final CheckpointSnapshots snapshots;
    private final SnapshotStreams streams;
    private final Lineages lineages;
    private final Qgroups qgroups;
    private final Optional<QgroupFigures> figures;
    private final Optional<InheritedCharges> charges;
    /**
     * Bumped by every change that can move a charge: a root branched from a snapshot, a root or
     * snapshot deleted, a limit changed. A root made from a template or a snapshot received descends
     * from nothing, and a snapshot taken inherits nothing, so they do not bump it. A charge pass with
     * nothing new to see is skipped.
     */
    private final AtomicLong changes = new AtomicLong();
    private long settledAt = -1;

    public BtrfsRootStore(BtrfsPool pool) {
        this(pool, Clock.systemUTC());
    }

    public BtrfsRootStore(BtrfsPool pool, Clock clock) {
        this(pool, clock, BtrfsIoctl.load().<Subvolumes>map(s -> s).orElse(pool.btrfs()));
    }

    BtrfsRootStore(BtrfsPool pool, Clock clock, Subvolumes subvolumes) {
        this.subvolumes = subvolumes;
        var paths = new RootPaths(pool);
        var trees = new SubvolumeTrees(subvolumes);
        var sends = new RunningSends();
        // The CLI is the reference, and always there: where the subvolume calls cannot manage groups.
        this.qgroups = subvolumes instanceof Qgroups q ? q : pool.btrfs();
        this.lineages = new Lineages(qgroups);
        this.quotas = PoolQuotas.enable(subvolumes, pool.path(), QuotaState.SYSFS);
        this.figures = subvolumes.filesystemId(pool.path()).map(fsid -> QgroupFigures.of(QuotaState.SYSFS, fsid));
        this.charges = quotas.mode().equals("squota") ? figures.map(f -> new InheritedCharges(pool, qgroups, lineages, f)) : Optional.empty();
        this.templates = new TemplateImages(pool, clock, subvolumes, trees);
        this.roots = new SandboxRoots(pool, paths, subvolumes, trees, templates, lineages, charges);
        this.snapshots = new CheckpointSnapshots(pool, paths, subvolumes, trees, sends, lineages);
        this.streams = new SnapshotStreams(pool, paths, snapshots, sends);
        templates.recoverInterruptedInstalls();
        log.atInfo().addKeyValue("pool", pool.path()).addKeyValue("subvolumes", subvolumes.kind())
                .addKeyValue("quotaMode", quotas.mode()).addKeyValue("quotasSwitched", quotas.switched())
                .addKeyValue("quotaRescanPending", quotas.state().map(QuotaState::inconsistent).orElse(false)).log("root store ready");
    }

    /**
     * How the pool counts what roots hold, as found or set at open: {@code squota} (a root's limit
     * counts what it wrote itself), {@code qgroup} (full accounting, the fallback: the files it
     * shares count too) or {@code unknown}.
     */
    public String quotaMode() {
        return quotas.mode();
    }

    /**
     * Charges what deleted roots wrote, and the live roots branched from them still hold, to those
     * roots' limits ({@link InheritedCharges}). Idempotent, and cheap when nothing was made,
     * deleted or limited since the last pass (it then does nothing); nothing to do where the pool
     * has full quotas, which count shared files in every root anyway. The service runs it every
     * few seconds; the first pass of a store always runs, and completes one a crash cut short.
     */
    public synchronized void settleInheritedCharges() {
        if (charges.isEmpty()) return;
        long seen = changes.get();
        if (seen == settledAt && !lineages.anyPending()) return;
        charges.get().settle();
        settledAt = seen;
    }

    /** {@code ioctl} or {@code cli}: how subvolumes are created and deleted. */
    public String subvolumeBackend() {
        return subvolumes.kind();
    }

    // --- roots ---

    @Override
    public Path createRoot(SandboxId id, String template, long diskBytes) {
        return roots.create(id, template, diskBytes);
    }

    @Override
    public void limitRoot(SandboxId id, long diskBytes) {
        changes.incrementAndGet();
        roots.limit(id, diskBytes);
    }

    @Override
    public Path createRootFrom(SandboxId id, CheckpointId checkpoint, long diskBytes) {
        changes.incrementAndGet();
        return roots.createFrom(id, checkpoint, diskBytes);
    }

    /**
     * {@inheritDoc}
     * <p>The old root is renamed aside (its mounts, which refer to it and not to its path, keep
     * working), then the new one is branched at the root's path.
     */
    @Override
    public Path replaceRoot(SandboxId id, CheckpointId checkpoint, long diskBytes) {
        changes.incrementAndGet();
        return roots.replace(id, checkpoint, diskBytes);
    }

    @Override
    public void deleteReplacedRoot(SandboxId id) {
        changes.incrementAndGet();
        roots.deleteReplaced(id);
    }

    @Override
    public Optional<Path> root(SandboxId id) {
        return roots.root(id);
    }

    /**
     * {@inheritDoc}
     * <p>The kernel's figures for the root's quota group, and for the group of its heir's charges
     * if it has one ({@link InheritedCharges}). Under full quotas (the fallback) the files it
     * shares count as written.
     */
    @Override
    public Optional<DiskUsage> diskUsage(SandboxId id) {
        Optional<Path> root = roots.root(id).filter(Subvolumes::isSubvolume);
        if (root.isEmpty() || figures.isEmpty()) return Optional.empty();
        long self;
        try {
            self = qgroups.subvolumeId(root.get());
        } catch (StasisException e) {
            return Optional.empty(); // deleted meanwhile
        }
        var f = figures.get();
        long written = f.used(Qgroup.ofSubvolume(self));
        var heir = Qgroup.aboveSubvolume(self);
        long inherited = f.has(heir) ? Math.max(0, f.used(heir) - written) : 0;
        return Optional.of(new DiskUsage(written, inherited));
    }

    @Override
    public void deleteRoot(SandboxId id) {
        changes.incrementAndGet();
        roots.delete(id);
    }

    @Override
    public Set<SandboxId> listRoots() {
        return roots.list();
    }

    // --- checkpoint snapshots ---

    /**
     * {@inheritDoc}
     * <p>Writes the pool's unwritten data out when the host has more than
     * {@value CheckpointSnapshots#FLUSH_THRESHOLD_BYTES} bytes of it.
     */
    @Override
    public void flush(SandboxId id) {
        snapshots.flush(id);
    }

    /**
     * {@inheritDoc}
     * <p>btrfs writes out the root's dirty page-cache data before it takes the snapshot, so every
     * write completed before the call is in the snapshot, fsync'd or not. The call waits for that
     * flush: a few ms with nothing dirty, ~0.3 s after 64 MiB and ~0.9 s after 256 MiB of writes not
     * yet written back (measured here by {@code BtrfsRootSnapshotIT}).
     */
    @Override
    public void snapshotRoot(SandboxId id, CheckpointId checkpoint) {
        snapshots.take(id, checkpoint);
    }

    @Override
    public boolean hasSnapshot(CheckpointId checkpoint) {
        return snapshots.has(checkpoint);
    }

    /**
     * {@inheritDoc}
     * <p>A read-only subvolume needs no flag cleared first: the kernel lets a caller with
     * {@code CAP_SYS_ADMIN} destroy it as it is, through the ioctl and the CLI alike.
     */
    @Override
    public void deleteSnapshot(CheckpointId checkpoint) {
        changes.incrementAndGet();
        snapshots.delete(checkpoint);
    }

    @Override
    public Set<CheckpointId> listSnapshots() {
        return snapshots.list();
    }

    // --- streams ---

    /** {@inheritDoc} <p>{@code btrfs send}, with {@code -p} for an incremental stream. */
    @Override
    public <R> R sendSnapshot(CheckpointId checkpoint, Optional<CheckpointId> parent, StreamReader<R> reader) {
        return streams.send(checkpoint, parent, reader);
    }

    /**
     * {@inheritDoc} <p>{@code btrfs receive} into {@code checkpoints/}: the stream names the
     * subvolume after the snapshot it was sent from, which must be the checkpoint id (a stream of
     * another snapshot is refused before anything is received).
     */
    @Override
    public void receiveSnapshot(CheckpointId checkpoint, InputStream stream) {
        streams.receive(checkpoint, stream);
    }

    // --- templates ---

    @Override
    public List<TemplateImage> templates() {
        return templates.list();
    }

    @Override
    public TemplateImage installTemplate(TemplateRecipe recipe, FileOwner owner, TemplateRecipe.Progress progress) {
        return templates.install(recipe, owner, progress);
    }

    /** {@inheritDoc} <p>A snapshot, so the cost does not grow with the files; measuring their size walks them. */
    @Override
    public TemplateImage installTemplateFromRoot(SandboxId id, TemplateImage image) {
        Path root = roots.root(id).orElseThrow(() -> StasisException.runtimeFailed(id.value(), "install template " + image.name(),
                "the sandbox has no root", null));
        return templates.installFromRoot(root, image);
    }

    /** {@inheritDoc} <p>A snapshot of the template's subvolume. */
    @Override
    public TemplateImage copyTemplate(String source, TemplateImage image) {
        return templates.copy(source, image);
    }

    @Override
    public boolean deleteTemplate(String name) {
        return templates.delete(name);
    }
}
