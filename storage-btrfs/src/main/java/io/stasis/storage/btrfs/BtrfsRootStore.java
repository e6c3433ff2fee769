package io.stasis.storage.btrfs;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.concurrent.KeyedLock;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.Ids;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.FileOwner;
import io.stasis.core.spi.RootStore;
import io.stasis.core.spi.StreamReader;
import io.stasis.core.spi.TemplateImage;
import io.stasis.core.spi.TemplateRecipe;
import io.stasis.host.FileTrees;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
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
 * gets its own; templates and checkpoint snapshots have none (nothing writes into them). Where
 * simple quotas are unavailable the pool keeps full quotas, and the same limit then also counts
 * the files a root shares (a WARN says so at open).
 *
 * <p>Limitation: btrfs snapshots do not descend into nested subvolumes. If a sandbox made one
 * inside its root (no privilege needed), a checkpoint's snapshot holds an empty directory in its
 * place, and so does every root branched from that checkpoint.
 */
public final class BtrfsRootStore implements RootStore {
    private static final Logger log = LoggerFactory.getLogger(BtrfsRootStore.class);
    private static final Pattern TEMPLATE_NAME = Pattern.compile("[a-z0-9][a-z0-9._-]{0,62}");
    private static final String RANDOM = "[0-9a-z]{" + Ids.SUFFIX_LENGTH + "}";
    private static final Pattern BUILD = Pattern.compile("\\.build-(.+)-" + RANDOM);
    private static final Pattern OLD = Pattern.compile("\\.old-(.+)-" + RANDOM);
    private static final String SIDECAR = ".json";
    private static final String REPLACED = ".replaced";
    private static final int ENOTEMPTY = 39;

    private final BtrfsPool pool;
    private final Clock clock;
    private final Subvolumes subvolumes;
    private final Btrfs btrfs;
    private final PoolQuotas.Outcome quotas;
    /** Readers snapshot templates; the short swap of an install takes it exclusively. */
    private final ReentrantReadWriteLock templateSwap = new ReentrantReadWriteLock();
    private final KeyedLock<String> installs = new KeyedLock<>();

    public BtrfsRootStore(BtrfsPool pool) {
        this(pool, Clock.systemUTC());
    }

    public BtrfsRootStore(BtrfsPool pool, Clock clock) {
        this(pool, clock, BtrfsIoctl.load().<Subvolumes>map(s -> s).orElse(pool.btrfs()));
    }

    BtrfsRootStore(BtrfsPool pool, Clock clock, Subvolumes subvolumes) {
        this.pool = pool;
        this.clock = clock;
        this.subvolumes = subvolumes;
        this.btrfs = pool.btrfs();
        recoverInterruptedInstalls();
        this.quotas = PoolQuotas.enable(subvolumes, pool.path(), QuotaState.SYSFS);
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

    /** {@code ioctl} or {@code cli}: how subvolumes are created and deleted. */
    public String subvolumeBackend() {
        return subvolumes.kind();
    }

    @Override
    public Path createRoot(SandboxId id, String template, long diskBytes) {
        requirePositive(id, diskBytes, "create root");
        Path target = rootPath(id);
        long start = System.nanoTime();
        templateSwap.readLock().lock();
        try {
            Path source = templatePath(template).orElseThrow(() -> StasisException.templateNotFound(template));
            if (!Subvolumes.isSubvolume(source)) throw StasisException.templateNotFound(template);
            if (Files.exists(target, LinkOption.NOFOLLOW_LINKS))
                throw new StasisException(ErrorCode.RUNTIME_FAILED, "create root failed for sandbox " + id + ": " + target + " already exists",
                        Map.of("sandbox", id.value(), "step", "create root", "path", target.toString()));
            subvolumes.snapshot(source, target, false);
        } catch (StasisException e) {
            if (e.code() != ErrorCode.RUNTIME_FAILED || e.details().containsKey("sandbox")) throw e;
            throw withSandbox(e, id, "create root");
        } finally {
            templateSwap.readLock().unlock();
        }
        limitNewRoot(id, target, diskBytes, "create root");
        log.atInfo().addKeyValue("sandbox", id).addKeyValue("template", template).addKeyValue("diskBytes", diskBytes)
                .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("root created");
        return target;
    }

    /** The limit of a root just made, before anything runs in it; on failure the root goes again. */
    private void limitNewRoot(SandboxId id, Path root, long diskBytes, String step) {
        try {
            subvolumes.limit(root, diskBytes);
        } catch (StasisException e) {
            var failure = withSandbox(e, id, step);
            try {
                deleteEntry(root);
            } catch (IOException | RuntimeException cleanup) {
                failure.addSuppressed(cleanup);
            }
            throw failure;
        }
    }

    @Override
    public void limitRoot(SandboxId id, long diskBytes) {
        String step = "limit root";
        requirePositive(id, diskBytes, step);
        Path root = rootPath(id);
        if (!Subvolumes.isSubvolume(root))
            throw new StasisException(ErrorCode.RUNTIME_FAILED, step + " failed for sandbox " + id + ": it has no root (" + root + ")",
                    Map.of("sandbox", id.value(), "step", step, "path", root.toString()));
        try {
            subvolumes.limit(root, diskBytes);
        } catch (StasisException e) {
            throw withSandbox(e, id, step);
        }
        log.atDebug().addKeyValue("sandbox", id).addKeyValue("diskBytes", diskBytes).log("root limit set");
    }

    private static void requirePositive(SandboxId id, long diskBytes, String step) {
        if (diskBytes <= 0)
            throw new StasisException(ErrorCode.RUNTIME_FAILED, step + " failed for sandbox " + id + ": the disk limit must be positive, was "
                    + diskBytes, Map.of("sandbox", id.value(), "step", step));
    }

    @Override
    public Path createRootFrom(SandboxId id, CheckpointId checkpoint, long diskBytes) {
        String step = "create root from checkpoint";
        requirePositive(id, diskBytes, step);
        Path source = snapshotPath(checkpoint);
        Path target = rootPath(id);
        if (!Subvolumes.isSubvolume(source))
            throw checkpointFailure(step, id, checkpoint, "checkpoint " + checkpoint + " has no root snapshot (" + source + ")");
        if (Files.exists(target, LinkOption.NOFOLLOW_LINKS))
            throw checkpointFailure(step, id, checkpoint, target + " already exists");
        long start = System.nanoTime();
        try {
            // Writable, unlike its source: a snapshot is read-only only if asked for.
            subvolumes.snapshot(source, target, false);
        } catch (StasisException e) {
            throw withCheckpoint(e, step, id, checkpoint);
        }
        limitNewRoot(id, target, diskBytes, step);
        log.atInfo().addKeyValue("sandbox", id).addKeyValue("checkpoint", checkpoint).addKeyValue("diskBytes", diskBytes)
                .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("root created from checkpoint");
        return target;
    }

    /**
     * {@inheritDoc}
     * <p>The old root is renamed aside (its mounts, which refer to it and not to its path, keep
     * working), then the new one is branched at the root's path.
     */
    @Override
    public Path replaceRoot(SandboxId id, CheckpointId checkpoint, long diskBytes) {
        String step = "replace root";
        requirePositive(id, diskBytes, step);
        Path root = rootPath(id);
        Path aside = replacedPath(id);
        if (!Subvolumes.isSubvolume(root)) throw checkpointFailure(step, id, checkpoint, "the sandbox has no root (" + root + ")");
        if (Files.exists(aside, LinkOption.NOFOLLOW_LINKS)) throw checkpointFailure(step, id, checkpoint, aside + " already exists");
        try {
            Files.move(root, aside, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw checkpointFailure(step, id, checkpoint, "moving the old root aside: " + e, e);
        }
        try {
            return createRootFrom(id, checkpoint, diskBytes);
        } catch (RuntimeException e) {
            try {
                Files.move(aside, root, StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException back) {
                e.addSuppressed(back);
            }
            throw e;
        }
    }

    @Override
    public void deleteReplacedRoot(SandboxId id) {
        deleteOf(id, replacedPath(id), "delete replaced root");
    }

    /** Deletes a sandbox's root (or the one put aside) if it is there; whether it was. */
    private boolean deleteOf(SandboxId id, Path path, String step) {
        if (!Files.exists(path, LinkOption.NOFOLLOW_LINKS)) return false;
        try {
            deleteEntry(path);
            return true;
        } catch (StasisException e) {
            throw withSandbox(e, id, step);
        } catch (IOException e) {
            throw StasisException.runtimeFailed(id.value(), step, e.toString(), e);
        }
    }

    @Override
    public Optional<Path> root(SandboxId id) {
        Path path = rootPath(id);
        return Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS) ? Optional.of(path) : Optional.empty();
    }

    @Override
    public void deleteRoot(SandboxId id) {
        deleteReplacedRoot(id);
        long start = System.nanoTime();
        if (!deleteOf(id, rootPath(id), "delete root")) return;
        log.atInfo().addKeyValue("sandbox", id).addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("root deleted");
    }

    @Override
    public Set<SandboxId> listRoots() {
        var ids = new TreeSet<SandboxId>();
        try (Stream<Path> entries = Files.list(pool.rootsDir())) {
            entries.filter(p -> Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS))
                    .map(p -> p.getFileName().toString())
                    .map(name -> name.endsWith(REPLACED) ? name.substring(0, name.length() - REPLACED.length()) : name)
                    .filter(SandboxId::isValid)
                    .forEach(name -> ids.add(new SandboxId(name)));
        } catch (IOException e) {
            throw StasisException.runtimeFailed(null, "list roots", e.toString(), e);
        }
        return ids;
    }

    /**
     * {@inheritDoc}
     * <p>btrfs writes out the root's dirty page-cache data before it takes the snapshot, so every
     * write completed before the call is in the snapshot, fsync'd or not. The call waits for that
     * flush: a few ms with nothing dirty, ~0.3 s after 64 MiB and ~0.9 s after 256 MiB of writes not
     * yet written back (measured here by {@code BtrfsRootSnapshotIT}).
     */
    /** Above this much dirty data on the host, a snapshot is preceded by a write-out. */
    static final long FLUSH_THRESHOLD_BYTES = 16L << 20;

    /**
     * Writes the pool's unwritten data out when the host has more than
     * {@value #FLUSH_THRESHOLD_BYTES} bytes of it (a global figure from /proc/meminfo, cheap to
     * read): otherwise the snapshot's own wait for it is short, and a sync would only add a
     * transaction commit.
     */
    @Override
    public void flush(SandboxId id) {
        if (HostMemory.dirtyBytes() <= FLUSH_THRESHOLD_BYTES) return;
        long start = System.nanoTime();
        subvolumes.sync(pool.path());
        log.atDebug().addKeyValue("sandbox", id).addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("flushed before a snapshot");
    }

    @Override
    public void snapshotRoot(SandboxId id, CheckpointId checkpoint) {
        String step = "snapshot root";
        Path source = rootPath(id);
        Path target = snapshotPath(checkpoint);
        if (!Files.exists(source, LinkOption.NOFOLLOW_LINKS))
            throw checkpointFailure(step, id, checkpoint, "sandbox " + id + " has no root");
        if (!Subvolumes.isSubvolume(source))
            throw checkpointFailure(step, id, checkpoint, "the root of sandbox " + id + " is not a btrfs subvolume (" + source + ")");
        if (Files.exists(target, LinkOption.NOFOLLOW_LINKS))
            throw checkpointFailure(step, id, checkpoint, "checkpoint " + checkpoint + " already has a root snapshot");
        long start = System.nanoTime();
        try {
            subvolumes.snapshot(source, target, true);
        } catch (StasisException e) {
            throw withCheckpoint(e, step, id, checkpoint);
        }
        log.atInfo().addKeyValue("sandbox", id).addKeyValue("checkpoint", checkpoint)
                .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("root snapshot taken");
    }

    @Override
    public boolean hasSnapshot(CheckpointId checkpoint) {
        return Subvolumes.isSubvolume(snapshotPath(checkpoint));
    }

    /**
     * {@inheritDoc}
     * <p>A read-only subvolume needs no flag cleared first: the kernel lets a caller with
     * {@code CAP_SYS_ADMIN} destroy it as it is, through the ioctl and the CLI alike.
     */
    @Override
    public void deleteSnapshot(CheckpointId checkpoint) {
        Path path = snapshotPath(checkpoint);
        if (!Files.exists(path, LinkOption.NOFOLLOW_LINKS)) return;
        abortSends(checkpoint);
        String step = "delete root snapshot";
        long start = System.nanoTime();
        try {
            deleteEntry(path);
        } catch (StasisException e) {
            throw withCheckpoint(e, step, null, checkpoint);
        } catch (IOException e) {
            throw checkpointFailure(step, null, checkpoint, e.toString(), e);
        }
        log.atInfo().addKeyValue("checkpoint", checkpoint).addKeyValue("ms", (System.nanoTime() - start) / 1_000_000)
                .log("root snapshot deleted");
    }

    /**
     * The {@code btrfs send} tools running, by the snapshots they read (the sent one and its
     * parent): the kernel refuses to delete a subvolume while a send reads it, so a delete aborts
     * them first (the upload then fails, and what it stored is never named by a descriptor).
     */
    private final Map<CheckpointId, Set<Process>> sends = new ConcurrentHashMap<>();

    /** A send or receive may take a while for a large root: it is bounded, but loosely. */
    private static final Duration STREAM_LIMIT = Duration.ofHours(2);

    /** {@inheritDoc} <p>{@code btrfs send}, with {@code -p} for an incremental stream. */
    @Override
    public <R> R sendSnapshot(CheckpointId checkpoint, Optional<CheckpointId> parent, StreamReader<R> reader) {
        String step = "send root snapshot";
        Path source = snapshotPath(checkpoint);
        if (!Subvolumes.isSubvolume(source)) throw checkpointFailure(step, null, checkpoint, "checkpoint " + checkpoint + " has no root snapshot");
        Optional<Path> parentPath = parent.map(this::snapshotPath);
        if (parentPath.isPresent() && !Subvolumes.isSubvolume(parentPath.get()))
            throw checkpointFailure(step, null, checkpoint, "the parent snapshot " + parent.get() + " is gone");
        long start = System.nanoTime();
        try {
            var started = new AtomicReference<Process>();
            R result;
            try {
                result = btrfs.send(source, parentPath, STREAM_LIMIT, process -> {
                    started.set(process);
                    sends.computeIfAbsent(checkpoint, k -> ConcurrentHashMap.newKeySet()).add(process);
                    parent.ifPresent(p -> sends.computeIfAbsent(p, k -> ConcurrentHashMap.newKeySet()).add(process));
                }, reader);
            } finally {
                var process = started.get();
                if (process != null) {
                    sends.computeIfPresent(checkpoint, (k, set) -> set.remove(process) && set.isEmpty() ? null : set);
                    parent.ifPresent(p -> sends.computeIfPresent(p, (k, set) -> set.remove(process) && set.isEmpty() ? null : set));
                }
            }
            log.atInfo().addKeyValue("checkpoint", checkpoint).addKeyValue("parent", parent.map(CheckpointId::value).orElse("none"))
                    .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("root snapshot sent");
            return result;
        } catch (StasisException e) {
            throw withCheckpoint(e, step, null, checkpoint);
        }
    }

    /**
     * {@inheritDoc} <p>{@code btrfs receive} into {@code checkpoints/}: the stream names the
     * subvolume after the snapshot it was sent from, which is the checkpoint id.
     */
    @Override
    public void receiveSnapshot(CheckpointId checkpoint, InputStream stream) {
        String step = "receive root snapshot";
        Path target = snapshotPath(checkpoint);
        if (Files.exists(target, LinkOption.NOFOLLOW_LINKS))
            throw checkpointFailure(step, null, checkpoint, "checkpoint " + checkpoint + " already has a root snapshot");
        long start = System.nanoTime();
        try {
            btrfs.receive(pool.checkpointsDir(), stream, STREAM_LIMIT);
            if (!Subvolumes.isSubvolume(target))
                throw checkpointFailure(step, null, checkpoint, "the stream did not hold the snapshot of " + checkpoint);
        } catch (StasisException e) {
            try {
                deleteSnapshot(checkpoint);
            } catch (RuntimeException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e.details().containsKey("checkpoint") ? e : withCheckpoint(e, step, null, checkpoint);
        }
        log.atInfo().addKeyValue("checkpoint", checkpoint).addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("root snapshot received");
    }

    private void abortSends(CheckpointId checkpoint) {
        var running = sends.getOrDefault(checkpoint, Set.of());
        for (var process : Set.copyOf(running)) {
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            log.atInfo().addKeyValue("checkpoint", checkpoint).log("aborted a btrfs send to delete the snapshot it read");
        }
    }

    /** Subvolumes named like a checkpoint; anything else in {@code checkpoints/} was not made here. */
    @Override
    public Set<CheckpointId> listSnapshots() {
        var ids = new TreeSet<CheckpointId>();
        try (Stream<Path> entries = Files.list(pool.checkpointsDir())) {
            entries.filter(p -> CheckpointId.isValid(p.getFileName().toString()))
                    .filter(Subvolumes::isSubvolume)
                    .forEach(p -> ids.add(new CheckpointId(p.getFileName().toString())));
        } catch (IOException e) {
            throw StasisException.runtimeFailed(null, "list root snapshots", e.toString(), e);
        }
        return ids;
    }

    @Override
    public List<TemplateImage> templates() {
        var images = new ArrayList<TemplateImage>();
        try (Stream<Path> entries = Files.list(pool.templatesDir())) {
            for (Path subvolume : entries.sorted().toList()) {
                String name = subvolume.getFileName().toString();
                if (!TEMPLATE_NAME.matcher(name).matches() || !Subvolumes.isSubvolume(subvolume)) continue;
                readSidecar(name).ifPresent(images::add);
            }
        } catch (IOException e) {
            throw StasisException.runtimeFailed(null, "list templates", e.toString(), e);
        }
        return images;
    }

    @Override
    public TemplateImage installTemplate(TemplateRecipe recipe, FileOwner owner, TemplateRecipe.Progress progress) {
        String name = recipe.name();
        if (name == null || !TEMPLATE_NAME.matcher(name).matches())
            throw StasisException.invalid("template", "'" + name + "' is not a template name (" + TEMPLATE_NAME.pattern() + ")");
        return installs.exclusive(name, () -> install(recipe, owner, progress));
    }

    /**
     * Deletes an installed template (not part of the SPI: for operators and tests). Roots made
     * from it are independent snapshots and stay. Returns false if there was none.
     */
    public boolean deleteTemplate(String name) {
        Path path = templatePath(name).orElse(null);
        if (path == null) return false;
        var lock = installs.exclusive(name);
        templateSwap.writeLock().lock();
        try {
            boolean existed = Subvolumes.isSubvolume(path);
            if (existed) subvolumes.delete(path);
            Files.deleteIfExists(sidecarPath(name));
            return existed;
        } catch (IOException e) {
            throw StasisException.runtimeFailed(null, "delete template " + name, e.toString(), e);
        } finally {
            templateSwap.writeLock().unlock();
            lock.close();
        }
    }

    private TemplateImage install(TemplateRecipe recipe, FileOwner owner, TemplateRecipe.Progress progress) {
        String name = recipe.name();
        String step = "build template " + name;
        long start = System.nanoTime();
        Path build = pool.templatesDir().resolve(".build-" + name + "-" + Ids.randomSuffix());
        Path sidecarTemp = pool.templatesDir().resolve(".build-" + name + "-" + Ids.randomSuffix() + SIDECAR);
        subvolumes.create(build);
        try {
            recipe.populate(build, progress);
            unmountLeftovers(build);
            progress.report(0.98, "setting file owners");
            var tree = TreeOwnership.chown(build, owner);
            btrfs.sync(build);
            btrfs.setReadOnly(build, true);
            var image = new TemplateImage(name, recipe.version(), clock.instant(), tree.sizeBytes());
            TemplateSidecar.of(image).writeTo(sidecarTemp);
            progress.report(0.99, "installing");
            Path old = swapIn(name, build, sidecarTemp);
            if (old != null) deleteQuietly(old, "replaced template");
            log.atInfo().addKeyValue("template", name).addKeyValue("version", image.version())
                    .addKeyValue("files", tree.files()).addKeyValue("sizeBytes", tree.sizeBytes())
                    .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("template installed");
            return image;
        } catch (Throwable failure) {
            cleanUpFailedBuild(build, sidecarTemp, failure);
            if (failure instanceof InterruptedException) Thread.currentThread().interrupt();
            if (failure instanceof StasisException e) throw e;
            if (failure instanceof Error e) throw e;
            throw new StasisException(ErrorCode.RUNTIME_FAILED, step + " failed: " + failure.getMessage(),
                    Map.of("step", step, "template", name, "version", recipe.version()), failure);
        }
    }

    /** Old version aside, new into place, its sidecar over the old one. Returns the old subvolume, if any. */
    private Path swapIn(String name, Path build, Path sidecarTemp) throws IOException {
        Path target = pool.templatesDir().resolve(name);
        templateSwap.writeLock().lock();
        try {
            Path old = null;
            if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
                old = pool.templatesDir().resolve(".old-" + name + "-" + Ids.randomSuffix());
                Files.move(target, old, StandardCopyOption.ATOMIC_MOVE);
            }
            try {
                Files.move(build, target, StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException e) {
                if (old != null) Files.move(old, target, StandardCopyOption.ATOMIC_MOVE); // put the old version back
                throw e;
            }
            TemplateSidecar.publish(sidecarTemp, sidecarPath(name));
            return old;
        } finally {
            templateSwap.writeLock().unlock();
        }
    }

    private void cleanUpFailedBuild(Path build, Path sidecarTemp, Throwable failure) {
        try {
            unmountLeftovers(build);
            if (Subvolumes.isSubvolume(build)) deleteSubvolumeTree(build);
            Files.deleteIfExists(sidecarTemp);
        } catch (Exception e) {
            failure.addSuppressed(e);
        }
        log.atWarn().addKeyValue("build", build).setCause(failure).log("template build failed; partial build removed");
    }

    /**
     * A recipe that mounted something inside its tree and left it would make the subvolume
     * undeletable; a busy leftover is detached lazily rather than failing the build.
     */
    private void unmountLeftovers(Path tree) throws IOException {
        var unmounted = pool.mounts().unmountAllBelow(tree);
        if (!unmounted.isEmpty())
            log.atWarn().addKeyValue("tree", tree).addKeyValue("mounts", unmounted).log("recipe left mounts in its tree; unmounted");
    }

    /** A subvolume with whatever it nests, or a plain directory someone else put in our namespace. */
    private void deleteEntry(Path path) throws IOException {
        if (Subvolumes.isSubvolume(path)) deleteSubvolumeTree(path);
        else FileTrees.deleteRecursively(path); // does not follow links
    }

    /**
     * Deletes a subvolume. If it holds nested subvolumes (a sandbox can create some: creating one
     * needs no privilege), those go first, deepest first.
     */
    private void deleteSubvolumeTree(Path subvolume) throws IOException {
        try {
            subvolumes.delete(subvolume);
        } catch (StasisException e) {
            if (!isNotEmpty(e)) throw e;
            var nested = nestedSubvolumes(subvolume);
            if (nested.isEmpty()) throw e;
            log.atInfo().addKeyValue("path", subvolume).addKeyValue("nested", nested.size()).log("deleting nested subvolumes first");
            for (Path inner : nested) deleteSubvolumeTree(inner);
            subvolumes.delete(subvolume);
        }
    }

    static boolean isNotEmpty(StasisException e) {
        Object errno = e.details().get("errno");
        if (errno instanceof Integer n) return n == ENOTEMPTY;
        Object stderr = e.details().get("stderr");
        return stderr != null && stderr.toString().contains("Directory not empty");
    }

    /** Subvolumes directly below {@code subvolume} (not below those), found by their root inode number. */
    static List<Path> nestedSubvolumes(Path subvolume) throws IOException {
        var found = new ArrayList<Path>();
        Files.walkFileTree(subvolume, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
                if (dir.equals(subvolume) || !Subvolumes.isSubvolume(dir)) return FileVisitResult.CONTINUE;
                found.add(dir);
                return FileVisitResult.SKIP_SUBTREE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException exc) {
                return FileVisitResult.CONTINUE;
            }
        });
        found.sort(Comparator.comparingInt(Path::getNameCount).reversed());
        return found;
    }

    /**
     * After a crash: builds in progress are garbage; a version set aside goes back into place if
     * its successor never arrived, else it is deleted; temporary sidecars go.
     */
    private void recoverInterruptedInstalls() {
        try (Stream<Path> entries = Files.list(pool.templatesDir())) {
            for (Path entry : entries.sorted().toList()) {
                String file = entry.getFileName().toString();
                if (!file.startsWith(".")) continue;
                Matcher old = OLD.matcher(file);
                if (BUILD.matcher(file).matches() && Subvolumes.isSubvolume(entry)) {
                    log.atWarn().addKeyValue("build", entry).log("removing an interrupted template build");
                    deleteQuietly(entry, "interrupted build");
                } else if (old.matches() && Subvolumes.isSubvolume(entry)) {
                    Path current = pool.templatesDir().resolve(old.group(1));
                    if (Files.exists(current, LinkOption.NOFOLLOW_LINKS)) deleteQuietly(entry, "replaced template");
                    else {
                        log.atWarn().addKeyValue("template", old.group(1)).log("restoring a template whose replacement was interrupted");
                        Files.move(entry, current, StandardCopyOption.ATOMIC_MOVE);
                    }
                } else if (file.startsWith(".build-") && file.endsWith(SIDECAR) && Files.isRegularFile(entry, LinkOption.NOFOLLOW_LINKS)) {
                    Files.deleteIfExists(entry);
                }
            }
        } catch (IOException e) {
            throw StasisException.runtimeFailed(null, "recover templates", e.toString(), e);
        }
    }

    private void deleteQuietly(Path subvolume, String what) {
        try {
            deleteSubvolumeTree(subvolume);
        } catch (IOException | RuntimeException e) {
            // Left for the next start's recovery; nothing depends on it.
            log.atWarn().addKeyValue("path", subvolume).setCause(e).log("could not delete " + what);
        }
    }

    private Optional<TemplateImage> readSidecar(String name) {
        Path file = sidecarPath(name);
        try {
            var image = TemplateSidecar.read(file).toImage();
            return Optional.of(new TemplateImage(name, image.version(), image.builtAt(), image.sizeBytes()));
        } catch (NoSuchFileException e) {
            log.atWarn().addKeyValue("template", name).log("template has no metadata file; ignored until rebuilt");
            return Optional.empty();
        } catch (IOException | RuntimeException e) {
            log.atWarn().addKeyValue("template", name).setCause(e).log("unreadable template metadata; ignored until rebuilt");
            return Optional.empty();
        }
    }

    private Optional<Path> templatePath(String name) {
        if (name == null || !TEMPLATE_NAME.matcher(name).matches()) return Optional.empty();
        return Optional.of(pool.templatesDir().resolve(name));
    }

    private Path sidecarPath(String name) {
        return pool.templatesDir().resolve(name + SIDECAR);
    }

    private Path rootPath(SandboxId id) {
        return pool.rootsDir().resolve(id.value()); // SandboxId is validated: no '/' or '..'
    }

    /** Where {@link #replaceRoot} puts the old root: no sandbox id has a dot. */
    private Path replacedPath(SandboxId id) {
        return pool.rootsDir().resolve(id.value() + REPLACED);
    }

    private Path snapshotPath(CheckpointId checkpoint) {
        return pool.checkpointsDir().resolve(checkpoint.value()); // CheckpointId is validated: no '/' or '..'
    }

    private static StasisException checkpointFailure(String step, SandboxId id, CheckpointId checkpoint, String problem) {
        return checkpointFailure(step, id, checkpoint, problem, null);
    }

    /** {@code runtime_failed} naming the step, sandbox (if any) and checkpoint in message and details. */
    private static StasisException checkpointFailure(String step, SandboxId id, CheckpointId checkpoint, String problem, Throwable cause) {
        return new StasisException(ErrorCode.RUNTIME_FAILED, step + " failed for " + subject(id, checkpoint) + ": " + problem,
                checkpointDetails(Map.of(), step, id, checkpoint), cause);
    }

    /** A tool failure, with the step, sandbox and checkpoint added to what it carries (errno, stderr). */
    private static StasisException withCheckpoint(StasisException e, String step, SandboxId id, CheckpointId checkpoint) {
        return new StasisException(e.code(), step + " failed for " + subject(id, checkpoint) + ": " + e.getMessage(),
                checkpointDetails(e.details(), step, id, checkpoint), e);
    }

    private static String subject(SandboxId id, CheckpointId checkpoint) {
        return id == null ? "checkpoint " + checkpoint : "sandbox " + id + ", checkpoint " + checkpoint;
    }

    private static Map<String, Object> checkpointDetails(Map<String, Object> from, String step, SandboxId id, CheckpointId checkpoint) {
        var details = new LinkedHashMap<String, Object>(from);
        details.putIfAbsent("step", step);
        if (id != null) details.put("sandbox", id.value());
        details.put("checkpoint", checkpoint.value());
        return details;
    }

    private static StasisException withSandbox(StasisException e, SandboxId id, String step) {
        var details = new LinkedHashMap<String, Object>(e.details());
        details.put("sandbox", id.value());
        details.putIfAbsent("step", step);
        return new StasisException(e.code(), step + " failed for sandbox " + id + ": " + e.getMessage(), details, e);
    }
}
