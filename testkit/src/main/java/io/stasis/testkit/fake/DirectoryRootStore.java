package io.stasis.testkit.fake;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.FileOwner;
import io.stasis.core.spi.RootStore;
import io.stasis.core.spi.StreamReader;
import io.stasis.core.spi.TemplateConfig;
import io.stasis.core.spi.TemplateImage;
import io.stasis.core.spi.TemplateRecipe;
import io.stasis.host.FileTrees;
import io.stasis.testkit.fake.TreeStream.Snapshot;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A {@link RootStore} on plain directories, for tests without root or btrfs; it passes the same
 * contract suite as {@code BtrfsRootStore} and fails the same way. Layout under its directory:
 * <pre>
 * templates/&lt;name&gt;              a template's tree; &lt;name&gt;.properties its version, build time and size
 * roots/&lt;sandboxId&gt;             a sandbox's root; &lt;sandboxId&gt;.replaced the one {@link #replaceRoot} put aside
 * checkpoints/&lt;checkpointId&gt;     a checkpoint's root snapshot
 * work/                          templates being built, streams being received (emptied at start)
 * </pre>
 * What it does not do as btrfs does:
 * <ul>
 *   <li>a root or a snapshot is a full copy, so its cost grows with its size;</li>
 *   <li>templates and snapshots are not read-only (permission bits do not stop root);</li>
 *   <li>disk limits are accepted and remembered ({@link #diskLimit}) but not enforced;</li>
 *   <li>the send stream is its own format ({@code TreeStream}), received by this class only, and
 *       an incremental stream names its parent by checkpoint id rather than by UUID;</li>
 *   <li>only directories, regular files and symlinks are kept: a device node or a FIFO in a root
 *       makes a snapshot of it fail.</li>
 * </ul>
 * Thread-safe: every change takes one lock; a recipe's build and a stream's reader run outside it.
 */
public final class DirectoryRootStore implements RootStore {
    private static final Pattern TEMPLATE_NAME = Pattern.compile("[a-z0-9_][a-z0-9._@-]{0,70}");
    private static final String SIDECAR = ".properties";
    private static final String REPLACED = ".replaced";

    private final Path templates;
    private final Path roots;
    private final Path checkpoints;
    private final Path work;
    private final Clock clock;
    private final ReentrantLock lock = new ReentrantLock();
    private final AtomicLong workNames = new AtomicLong();
    private final Map<SandboxId, Long> limits = new ConcurrentHashMap<>();

    public DirectoryRootStore(Path dir) {
        this(dir, Clock.systemUTC());
    }

    public DirectoryRootStore(Path dir, Clock clock) {
        this.templates = dir.resolve("templates");
        this.roots = dir.resolve("roots");
        this.checkpoints = dir.resolve("checkpoints");
        this.work = dir.resolve("work");
        this.clock = clock;
        try {
            FileTrees.deleteRecursively(work); // builds and receives a previous instance left half-done
            for (Path d : List.of(templates, roots, checkpoints, work)) Files.createDirectories(d);
        } catch (IOException e) {
            throw StasisException.runtimeFailed(null, "open root store", e.toString(), e);
        }
    }

    /** The disk limit last given for a sandbox's root (not enforced here), if it has a root. */
    public OptionalLong diskLimit(SandboxId id) {
        Long limit = limits.get(id);
        return limit == null ? OptionalLong.empty() : OptionalLong.of(limit);
    }

    @Override
    public Path createRoot(SandboxId id, String template, long diskBytes) {
        String step = "create root";
        requirePositive(id, diskBytes, step);
        return locked(() -> {
            Path source = templatePath(template).filter(p -> Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS))
                    .filter(p -> Files.isRegularFile(sidecarPath(template))).orElseThrow(() -> StasisException.templateNotFound(template));
            Path target = rootPath(id);
            if (exists(target)) throw failure(step, id, null, target + " already exists");
            copy(source, target, step, id, null);
            limits.put(id, diskBytes);
            return target;
        });
    }

    @Override
    public Path createRootFrom(SandboxId id, CheckpointId checkpoint, long diskBytes) {
        String step = "create root from checkpoint";
        requirePositive(id, diskBytes, step);
        return locked(() -> {
            Path source = snapshotPath(checkpoint);
            Path target = rootPath(id);
            if (!Files.isDirectory(source, LinkOption.NOFOLLOW_LINKS))
                throw failure(step, id, checkpoint, "checkpoint " + checkpoint + " has no root snapshot (" + source + ")");
            if (exists(target)) throw failure(step, id, checkpoint, target + " already exists");
            copy(source, target, step, id, checkpoint);
            limits.put(id, diskBytes);
            return target;
        });
    }

    @Override
    public Path replaceRoot(SandboxId id, CheckpointId checkpoint, long diskBytes) {
        String step = "replace root";
        requirePositive(id, diskBytes, step);
        return locked(() -> {
            Path root = rootPath(id);
            Path aside = replacedPath(id);
            if (!Files.isDirectory(root, LinkOption.NOFOLLOW_LINKS)) throw failure(step, id, checkpoint, "the sandbox has no root (" + root + ")");
            if (exists(aside)) throw failure(step, id, checkpoint, aside + " already exists");
            move(root, aside, step, id, checkpoint);
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
        });
    }

    @Override
    public void deleteReplacedRoot(SandboxId id) {
        locked(() -> delete(replacedPath(id), "delete replaced root", id, null));
    }

    @Override
    public void limitRoot(SandboxId id, long diskBytes) {
        String step = "limit root";
        requirePositive(id, diskBytes, step);
        locked(() -> {
            if (!Files.isDirectory(rootPath(id), LinkOption.NOFOLLOW_LINKS))
                throw failure(step, id, null, "it has no root (" + rootPath(id) + ")");
            limits.put(id, diskBytes);
            return null;
        });
    }

    @Override
    public Optional<Path> root(SandboxId id) {
        Path path = rootPath(id);
        return Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS) ? Optional.of(path) : Optional.empty();
    }

    /** {@inheritDoc} <p>The sizes of its files: plain copies share nothing, so all of it counts as written. */
    @Override
    public Optional<DiskUsage> diskUsage(SandboxId id) {
        Path root = rootPath(id);
        if (!Files.isDirectory(root, LinkOption.NOFOLLOW_LINKS)) return Optional.empty();
        try (var files = Files.walk(root)) {
            long bytes = files.filter(p -> Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)).mapToLong(p -> {
                try {
                    return Files.size(p);
                } catch (IOException e) {
                    return 0; // deleted meanwhile
                }
            }).sum();
            return Optional.of(new DiskUsage(bytes, 0));
        } catch (IOException | UncheckedIOException e) {
            return Optional.empty();
        }
    }

    @Override
    public void deleteRoot(SandboxId id) {
        locked(() -> {
            delete(replacedPath(id), "delete replaced root", id, null);
            delete(rootPath(id), "delete root", id, null);
            limits.remove(id);
            return null;
        });
    }

    @Override
    public Set<SandboxId> listRoots() {
        var ids = new TreeSet<SandboxId>();
        for (String name : directoryNames(roots, "list roots")) {
            String id = name.endsWith(REPLACED) ? name.substring(0, name.length() - REPLACED.length()) : name;
            if (SandboxId.isValid(id)) ids.add(new SandboxId(id));
        }
        return ids;
    }

    @Override
    public void snapshotRoot(SandboxId id, CheckpointId checkpoint) {
        String step = "snapshot root";
        locked(() -> {
            Path source = rootPath(id);
            Path target = snapshotPath(checkpoint);
            if (!Files.isDirectory(source, LinkOption.NOFOLLOW_LINKS)) throw failure(step, id, checkpoint, "sandbox " + id + " has no root");
            if (exists(target)) throw failure(step, id, checkpoint, "checkpoint " + checkpoint + " already has a root snapshot");
            copy(source, target, step, id, checkpoint);
            return null;
        });
    }

    @Override
    public boolean hasSnapshot(CheckpointId checkpoint) {
        return Files.isDirectory(snapshotPath(checkpoint), LinkOption.NOFOLLOW_LINKS);
    }

    @Override
    public void deleteSnapshot(CheckpointId checkpoint) {
        locked(() -> delete(snapshotPath(checkpoint), "delete root snapshot", null, checkpoint));
    }

    /**
     * {@inheritDoc}
     * <p>The stream is made in memory under the lock, then handed to the reader outside it: a
     * snapshot deleted meanwhile does not cut the stream short, as it would with btrfs.
     */
    @Override
    public <R> R sendSnapshot(CheckpointId checkpoint, Optional<CheckpointId> parent, StreamReader<R> reader) {
        String step = "send root snapshot";
        byte[] stream = locked(() -> {
            if (!hasSnapshot(checkpoint)) throw failure(step, null, checkpoint, "checkpoint " + checkpoint + " has no root snapshot");
            if (parent.isPresent() && !hasSnapshot(parent.get()))
                throw failure(step, null, checkpoint, "the parent snapshot " + parent.get() + " is gone");
            var out = new ByteArrayOutputStream();
            try {
                TreeStream.write(snapshotOf(checkpoint), parent.map(this::snapshotOf), out);
            } catch (IOException e) {
                throw failure(step, null, checkpoint, e.toString(), e);
            }
            return out.toByteArray();
        });
        try {
            return reader.read(new ByteArrayInputStream(stream));
        } catch (IOException e) {
            throw failure(step, null, checkpoint, e.toString(), e);
        }
    }

    private Snapshot snapshotOf(CheckpointId checkpoint) {
        return new Snapshot(checkpoint.value(), snapshotPath(checkpoint));
    }

    /**
     * {@inheritDoc}
     * <p>The stream is spooled to a file first, outside the lock, so that a slow or piped source
     * holds up no other call.
     */
    @Override
    public void receiveSnapshot(CheckpointId checkpoint, InputStream stream) {
        String step = "receive root snapshot";
        Path spool = workPath("stream");
        Path staging = workPath("receive");
        try {
            Files.copy(stream, spool);
            locked(() -> {
                Path target = snapshotPath(checkpoint);
                if (exists(target)) throw failure(step, null, checkpoint, "checkpoint " + checkpoint + " already has a root snapshot");
                String name;
                try (InputStream in = Files.newInputStream(spool)) {
                    name = TreeStream.read(in, parent -> CheckpointId.isValid(parent) && hasSnapshot(new CheckpointId(parent))
                            ? Optional.of(snapshotPath(new CheckpointId(parent))) : Optional.empty(), staging);
                } catch (IOException e) {
                    throw failure(step, null, checkpoint, e.toString(), e);
                }
                if (!name.equals(checkpoint.value()))
                    throw failure(step, null, checkpoint, "the stream did not hold the snapshot of " + checkpoint + " but of " + name);
                move(staging, target, step, null, checkpoint);
                return null;
            });
        } catch (IOException e) {
            throw failure(step, null, checkpoint, "reading the stream: " + e, e);
        } finally {
            deleteQuietly(spool);
            deleteQuietly(staging);
        }
    }

    @Override
    public Set<CheckpointId> listSnapshots() {
        var ids = new TreeSet<CheckpointId>();
        for (String name : directoryNames(checkpoints, "list root snapshots"))
            if (CheckpointId.isValid(name)) ids.add(new CheckpointId(name));
        return ids;
    }

    @Override
    public List<TemplateImage> templates() {
        var images = new ArrayList<TemplateImage>();
        for (String name : directoryNames(templates, "list templates")) {
            if (!TEMPLATE_NAME.matcher(name).matches()) continue;
            readSidecar(name).ifPresent(images::add);
        }
        return images;
    }

    /**
     * {@inheritDoc}
     * <p>The recipe fills a directory of {@code work/}, outside the lock; the finished tree then
     * takes the old version's place under it.
     */
    @Override
    public TemplateImage installTemplate(TemplateRecipe recipe, FileOwner owner, TemplateRecipe.Progress progress) {
        String name = recipe.name();
        if (name == null || !TEMPLATE_NAME.matcher(name).matches())
            throw StasisException.invalid("template", "'" + name + "' is not a template name (" + TEMPLATE_NAME.pattern() + ")");
        String step = "build template " + name;
        Path build = workPath("build-" + name);
        try {
            Files.createDirectory(build);
            recipe.populate(build, progress);
            progress.report(0.98, recipe.keepsOwners() ? "measuring the files" : "setting file owners");
            long size = recipe.keepsOwners() ? sizeOf(build) : Trees.chown(build, owner);
            var image = new TemplateImage(name, recipe.version(), clock.instant(), size, recipe.config());
            progress.report(0.99, "installing");
            Path old = workPath("old-" + name);
            locked(() -> {
                swapIn(image, build, old);
                return null;
            });
            deleteQuietly(old);
            return image;
        } catch (Throwable failure) {
            deleteQuietly(build);
            if (failure instanceof InterruptedException) Thread.currentThread().interrupt();
            if (failure instanceof StasisException e) throw e;
            if (failure instanceof Error e) throw e;
            var details = new LinkedHashMap<String, Object>();
            details.put("step", step);
            details.put("template", name);
            details.put("version", recipe.version());
            throw new StasisException(ErrorCode.RUNTIME_FAILED, step + " failed: " + failure.getMessage(), details, failure);
        }
    }

    @Override
    public TemplateImage installTemplateFromRoot(SandboxId id, TemplateImage image) {
        String step = "install template from root";
        return installCopy(step, id, image, () -> root(id).orElseThrow(() -> failure(step, id, null, "the sandbox has no root")));
    }

    /** A copy of the tree {@code source} gives, installed whole as {@code image} (as the btrfs store's snapshot). */
    private TemplateImage installCopy(String step, SandboxId id, TemplateImage image, Supplier<Path> source) {
        String name = image.name();
        if (!TEMPLATE_NAME.matcher(name).matches())
            throw StasisException.invalid("template", "'" + name + "' is not a template name (" + TEMPLATE_NAME.pattern() + ")");
        Path build = workPath("build-" + name);
        try {
            Trees.copy(source.get(), build);
            var installed = image.withSize(sizeOf(build));
            Path old = workPath("old-" + name);
            locked(() -> {
                swapIn(installed, build, old);
                return null;
            });
            deleteQuietly(old);
            return installed;
        } catch (IOException e) {
            deleteQuietly(build);
            throw failure(step, id, null, e.toString(), e);
        } catch (RuntimeException e) {
            deleteQuietly(build);
            throw e;
        }
    }

    private static long sizeOf(Path tree) throws IOException {
        long size = 0;
        for (var entry : Trees.entries(tree))
            if (entry.kind() == TreeEntry.Kind.FILE) size += Files.size(Trees.resolve(tree, entry.path()));
        return size;
    }

    @Override
    public TemplateImage copyTemplate(String source, TemplateImage image) {
        Path from = templatePath(source).filter(p -> Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS))
                .filter(p -> Files.isRegularFile(sidecarPath(source))).orElseThrow(() -> StasisException.templateNotFound(source));
        return installCopy("copy template", null, image, () -> from);
    }

    @Override
    public boolean deleteTemplate(String name) {
        return locked(() -> {
            Path path = templatePath(name).orElse(null);
            if (path == null || !exists(path)) return false;
            delete(path, "delete template", null, null);
            try {
                Files.deleteIfExists(sidecarPath(name));
            } catch (IOException e) {
                throw failure("delete template", null, null, e.toString(), e);
            }
            return true;
        });
    }

    private void swapIn(TemplateImage image, Path build, Path old) {
        Path target = templates.resolve(image.name());
        try {
            boolean replacing = exists(target);
            if (replacing) Files.move(target, old, StandardCopyOption.ATOMIC_MOVE);
            try {
                Files.move(build, target, StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException e) {
                if (replacing) Files.move(old, target, StandardCopyOption.ATOMIC_MOVE); // the previous version stays
                throw e;
            }
            writeSidecar(image);
        } catch (IOException e) {
            throw StasisException.runtimeFailed(null, "install template " + image.name(), e.toString(), e);
        }
    }

    private void writeSidecar(TemplateImage image) throws IOException {
        var properties = new Properties();
        properties.setProperty("version", image.version());
        properties.setProperty("builtAt", image.builtAt().toString());
        properties.setProperty("sizeBytes", Long.toString(image.sizeBytes()));
        var c = image.config();
        c.tenant().ifPresent(v -> properties.setProperty("tenant", v));
        c.from().ifPresent(v -> properties.setProperty("from", v));
        c.workdir().ifPresent(v -> properties.setProperty("workdir", v));
        c.user().ifPresent(v -> properties.setProperty("user", v));
        c.layerOf().ifPresent(v -> properties.setProperty("layerOf", v));
        c.preboot().ifPresent(p -> {
            properties.setProperty("preboot.startCmd", p.startCmd());
            properties.setProperty("preboot.readyCmd", p.readyCmd());
            properties.setProperty("preboot.checkpoint", p.checkpoint());
            properties.setProperty("preboot.holder", p.holder());
        });
        c.env().forEach((k, v) -> properties.setProperty("env." + k, v));
        c.cmd().ifPresent(cmd -> {
            properties.setProperty("cmd", Integer.toString(cmd.size()));
            for (int i = 0; i < cmd.size(); i++) properties.setProperty("cmd." + i, cmd.get(i));
        });
        Path temp = workPath("sidecar");
        try (Writer out = Files.newBufferedWriter(temp)) {
            properties.store(out, "template " + image.name());
        }
        Files.move(temp, sidecarPath(image.name()), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    private Optional<TemplateImage> readSidecar(String name) {
        var properties = new Properties();
        try (Reader in = Files.newBufferedReader(sidecarPath(name))) {
            properties.load(in);
            var env = new LinkedHashMap<String, String>();
            for (String key : properties.stringPropertyNames())
                if (key.startsWith("env.")) env.put(key.substring(4), properties.getProperty(key));
            Optional<List<String>> cmd = Optional.ofNullable(properties.getProperty("cmd")).map(n -> {
                var argv = new ArrayList<String>();
                for (int i = 0; i < Integer.parseInt(n); i++) argv.add(properties.getProperty("cmd." + i));
                return argv;
            });
            var config = new TemplateConfig(Optional.ofNullable(properties.getProperty("tenant")), Optional.ofNullable(properties.getProperty("from")),
                    env, Optional.ofNullable(properties.getProperty("workdir")), Optional.ofNullable(properties.getProperty("user")), cmd,
                    Optional.ofNullable(properties.getProperty("layerOf")),
                    Optional.ofNullable(properties.getProperty("preboot.checkpoint")).map(cp -> new TemplateConfig.Preboot(
                            properties.getProperty("preboot.startCmd"), properties.getProperty("preboot.readyCmd"), cp,
                            properties.getProperty("preboot.holder"))));
            return Optional.of(new TemplateImage(name, properties.getProperty("version"), Instant.parse(properties.getProperty("builtAt")),
                    Long.parseLong(properties.getProperty("sizeBytes")), config));
        } catch (IOException | RuntimeException e) {
            return Optional.empty(); // as btrfs: a template without readable metadata is not listed
        }
    }

    private <T> T locked(Supplier<T> action) {
        lock.lock();
        try {
            return action.get();
        } finally {
            lock.unlock();
        }
    }

    private static void requirePositive(SandboxId id, long diskBytes, String step) {
        if (diskBytes <= 0)
            throw failure(step, id, null, "the disk limit must be positive, was " + diskBytes);
    }

    /**
     * Copies a tree to a new place, where it appears whole (as a btrfs snapshot does: a caller
     * without the lock never sees half of it); on failure, nothing is left.
     */
    private void copy(Path source, Path target, String step, SandboxId id, CheckpointId checkpoint) {
        Path copy = workPath("copy");
        try {
            Trees.copy(source, copy);
            Files.move(copy, target, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            var failure = failure(step, id, checkpoint, e.toString(), e);
            try {
                FileTrees.deleteRecursively(copy);
            } catch (IOException cleanup) {
                failure.addSuppressed(cleanup);
            }
            throw failure;
        }
    }

    private static void move(Path from, Path to, String step, SandboxId id, CheckpointId checkpoint) {
        try {
            Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw failure(step, id, checkpoint, "moving " + from + " to " + to + ": " + e, e);
        }
    }

    private static Void delete(Path path, String step, SandboxId id, CheckpointId checkpoint) {
        try {
            FileTrees.deleteRecursively(path);
            return null;
        } catch (IOException e) {
            throw failure(step, id, checkpoint, e.toString(), e);
        }
    }

    private static void deleteQuietly(Path path) {
        try {
            FileTrees.deleteRecursively(path);
        } catch (IOException e) {
            // Under work/: emptied at the next start.
        }
    }

    private static List<String> directoryNames(Path dir, String step) {
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.filter(p -> Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)).map(p -> p.getFileName().toString()).sorted().toList();
        } catch (IOException e) {
            throw StasisException.runtimeFailed(null, step, e.toString(), e);
        }
    }

    private static boolean exists(Path path) {
        return Files.exists(path, LinkOption.NOFOLLOW_LINKS);
    }

    private Optional<Path> templatePath(String name) {
        if (name == null || !TEMPLATE_NAME.matcher(name).matches()) return Optional.empty();
        return Optional.of(templates.resolve(name));
    }

    private Path sidecarPath(String name) {
        return templates.resolve(name + SIDECAR);
    }

    private Path rootPath(SandboxId id) {
        return roots.resolve(id.value());
    }

    private Path replacedPath(SandboxId id) {
        return roots.resolve(id.value() + REPLACED);
    }

    private Path snapshotPath(CheckpointId checkpoint) {
        return checkpoints.resolve(checkpoint.value());
    }

    /** A fresh name under {@code work/}, not yet used. */
    private Path workPath(String what) {
        return work.resolve(what + "-" + workNames.incrementAndGet());
    }

    /** {@code runtime_failed} naming the step, the sandbox and the checkpoint, as {@code BtrfsRootStore} does. */
    private static StasisException failure(String step, SandboxId id, CheckpointId checkpoint, String problem) {
        return failure(step, id, checkpoint, problem, null);
    }

    private static StasisException failure(String step, SandboxId id, CheckpointId checkpoint, String problem, Throwable cause) {
        var details = new LinkedHashMap<String, Object>();
        details.put("step", step);
        if (id != null) details.put("sandbox", id.value());
        if (checkpoint != null) details.put("checkpoint", checkpoint.value());
        String subject = id == null ? "checkpoint " + checkpoint
                : checkpoint == null ? "sandbox " + id : "sandbox " + id + ", checkpoint " + checkpoint;
        return new StasisException(ErrorCode.RUNTIME_FAILED, step + " failed for " + subject + ": " + problem, details, cause);
    }
}
