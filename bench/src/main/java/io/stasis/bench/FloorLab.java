package io.stasis.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.runtime.runc.Runc;
import io.stasis.sdk.Sandbox;
import io.stasis.storage.btrfs.Btrfs;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Everything the raw floors make, under {@code <dataDir>/bench-floors} and
 * {@code <pool>/bench-floors}: containers in the benchmark's own runc state directory, under a
 * cgroup parent of their own (never the service's), their root subvolumes, CRIU images. Closing
 * removes what is left, the cgroup parent included, and fails if a cgroup or process remains.
 */
final class FloorLab implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Path RUNC = Path.of("/usr/sbin/runc");
    private static final Duration TOOL_TIMEOUT = Duration.ofMinutes(2);

    /** A floor container: its id, bundle directory and root subvolume. */
    record FloorContainer(SandboxId id, Path bundle, Path root) {
        Path pidFile() {
            return bundle.resolve("init.pid");
        }
    }

    final Runc runc;
    final Btrfs btrfs = Btrfs.fromSystem();
    final String cgroupParent = "stasis-bench-" + HexFormat.of().formatHex(new SecureRandom().generateSeed(4));
    private final PrivateService service;
    private final Path work;
    private final Path subvolumes;
    private final Set<SandboxId> containers = new LinkedHashSet<>();
    private final Set<SandboxId> everyContainer = new LinkedHashSet<>();
    private final Set<Path> liveSubvolumes = new LinkedHashSet<>();
    private int counter;

    FloorLab(PrivateService service) throws IOException {
        this.service = service;
        this.work = Files.createDirectories(service.dataDir().resolve("bench-floors"));
        this.subvolumes = Files.createDirectories(service.btrfsMount().resolve("bench-floors"));
        Path state = work.resolve("runc");
        // The CRIU the service uses: the floors of hibernate and fork run it the way the service does.
        this.runc = new Runc(RUNC, state, work.resolve("logs"), TOOL_TIMEOUT, service.criu());
        service.attach(this);
    }

    /** The bundle configuration the service writes for a sandbox of this template. */
    ObjectNode bundleConfigOf(String template) throws IOException {
        Sandbox sandbox = service.create(template);
        try {
            return bundleConfigOfSandbox(sandbox.id());
        } finally {
            sandbox.delete();
        }
    }

    /** The bundle configuration of a running service sandbox (its template, limits, mounts). */
    ObjectNode bundleConfigOfSandbox(String sandboxId) throws IOException {
        return (ObjectNode) JSON.readTree(service.bundleConfig(sandboxId).toFile());
    }

    Path newSubvolumePath() {
        service.requireOpen(); // nothing new once the teardown has begun
        Path path = subvolumes.resolve("floor-" + (++counter));
        liveSubvolumes.add(path);
        return path;
    }

    void deleteSubvolume(Path path) {
        btrfs.delete(path);
        liveSubvolumes.remove(path);
    }

    /** A fresh, empty directory under the lab's work directory (CRIU images, CRIU work dirs). */
    Path newDirectory(String kind) {
        try {
            return Files.createDirectories(work.resolve(kind).resolve(kind + "-" + (++counter)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** runc creates an image directory 0700; the restored root of a user namespace must traverse it. */
    static void openImage(Path images) {
        try {
            Files.setPosixFilePermissions(images, PosixFilePermissions.fromString("rwx--x--x"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A root snapshot of {@code source} and a copy of the service's config pointing at it, with a cgroup of its own. */
    FloorContainer prepare(ObjectNode serviceConfig, Path source) throws IOException {
        Path root = newSubvolumePath();
        btrfs.snapshot(source, root, false);
        var id = SandboxId.random();
        ObjectNode config = serviceConfig.deepCopy();
        ((ObjectNode) config.path("root")).put("path", root.toString());
        ((ObjectNode) config.path("linux")).put("cgroupsPath", cgroupPath(id));
        config.put("hostname", id.value());
        Path bundle = Files.createDirectories(work.resolve("bundles").resolve(id.value()));
        ownCopiesOfBundleFiles(config, bundle);
        JSON.writeValue(bundle.resolve("config.json").toFile(), config);
        containers.add(id);
        everyContainer.add(id);
        return new FloorContainer(id, bundle, root);
    }

    /**
     * Files the service bind-mounts from a sandbox's own bundle (its resolv.conf) go with that
     * sandbox: the floor container gets copies in its bundle, so it starts the same, whatever
     * becomes of the sandbox it was copied from.
     */
    private static void ownCopiesOfBundleFiles(ObjectNode config, Path bundle) throws IOException {
        for (var mount : config.path("mounts")) {
            if (!"bind".equals(mount.path("type").asText())) continue;
            Path source = Path.of(mount.path("source").asText());
            if (!source.getParent().getFileName().toString().startsWith(SandboxId.PREFIX) || Files.isDirectory(source)) continue;
            Path copy = bundle.resolve(source.getFileName());
            if (Files.isRegularFile(source)) Files.copy(source, copy, StandardCopyOption.REPLACE_EXISTING);
            else Files.writeString(copy, ""); // its sandbox is gone already: the mount point needs a file, not its content
            ((ObjectNode) mount).put("source", copy.toString());
        }
    }

    /** Prepares and starts a floor container ({@code runc run --detach}). */
    FloorContainer start(ObjectNode serviceConfig, Path source) throws IOException {
        var container = prepare(serviceConfig, source);
        try {
            runc.runDetached(container.id(), container.bundle(), container.pidFile());
        } catch (RuntimeException e) {
            remove(container);
            throw e;
        }
        return container;
    }

    /** The container's cgroup below each controller. */
    String cgroupPath(SandboxId id) {
        return "/" + cgroupParent + "/" + id.value();
    }

    void remove(FloorContainer container) {
        if (runc.state(container.id()).isPresent()) runc.deleteForce(container.id());
        containers.remove(container.id());
        deleteSubvolume(container.root());
        PrivateService.deleteTree(container.bundle());
    }

    /** Containers, subvolumes, then the cgroup parent; every failure is kept, none stops the rest. */
    @Override
    public void close() {
        service.detach(this);
        RuntimeException failure = null;
        for (SandboxId id : List.copyOf(containers)) {
            try {
                if (runc.state(id).isPresent()) runc.deleteForce(id);
            } catch (RuntimeException e) {
                failure = collect(failure, e);
            }
        }
        for (Path path : List.copyOf(liveSubvolumes)) {
            try {
                if (Files.exists(path)) btrfs.delete(path);
            } catch (RuntimeException e) {
                failure = collect(failure, e);
            }
        }
        try {
            Files.deleteIfExists(subvolumes);
            PrivateService.deleteTree(work);
            try (var controllers = Files.list(Path.of("/sys/fs/cgroup"))) {
                for (Path controller : controllers.toList()) {
                    Path parent = controller.resolve(cgroupParent);
                    if (Files.isDirectory(parent)) Files.delete(parent); // rmdir: runc removed the children
                }
            }
        } catch (IOException | RuntimeException e) {
            failure = collect(failure, e instanceof RuntimeException r ? r : new IllegalStateException(e));
        }
        var left = new ArrayList<>(Leftovers.cgroups(List.of("/" + cgroupParent)));
        left.addAll(Leftovers.liveProcessesOf(everyContainer.stream().map(SandboxId::value).toList()));
        if (!left.isEmpty()) failure = collect(failure, new IllegalStateException("floor cgroups left: " + left));
        if (failure != null) throw failure;
    }

    private static RuntimeException collect(RuntimeException first, RuntimeException next) {
        if (first == null) return next;
        first.addSuppressed(next);
        return first;
    }
}
