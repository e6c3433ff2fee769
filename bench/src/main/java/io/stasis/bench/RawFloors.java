package io.stasis.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.runtime.runc.Runc;
import io.stasis.storage.btrfs.Btrfs;
import io.stasis.sdk.Sandbox;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The raw floors, in the same run and on the same pool: what runc and btrfs cost with no service
 * on top.
 * <ul>
 *   <li>{@code btrfs subvolume snapshot} of the template alone (the new subvolume is deleted, untimed);</li>
 *   <li>{@code runc run --detach} of the very bundle the service wrote for a sandbox of that template,
 *       with its root pointed at a fresh writable snapshot of the template and its own cgroup, from
 *       start until it returns (then {@code runc delete --force} and the subvolume go, untimed);</li>
 *   <li>{@code runc exec} of {@code true} in one such running container, the floor of an exec.</li>
 * </ul>
 * Containers live in the benchmark's own runc state directory and under a cgroup parent of
 * their own, never the service's.
 */
final class RawFloors implements Scenario {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Override
    public String name() {
        return "floors";
    }

    @Override
    public ScenarioResult run(BenchContext context) throws Exception {
        try (var lab = new FloorLab(context.service())) {
            var figures = new ArrayList<Figure>();
            for (String template : CreateToFirstOutput.TEMPLATES) figures.addAll(startFloors(context, lab, template));
            figures.add(execFloor(context, lab));
            return new ScenarioResult(figures, Map.of("runc", lab.runc.version(), "btrfs", lab.btrfs.version(),
                    "cgroupParent", lab.cgroupParent));
        }
    }

    private List<Figure> startFloors(BenchContext context, FloorLab lab, String template) throws Exception {
        ObjectNode config = lab.bundleConfigOf(template);
        Path source = context.service().templateSubvolume(template);
        int n = context.counts().floor();
        int warmup = context.counts().warmup();
        double[] snapshots = context.sampler().run("floor: btrfs subvolume snapshot (" + template + ")", warmup, n, i -> {
            Path target = lab.newSubvolumePath();
            long start = System.nanoTime();
            lab.btrfs.snapshot(source, target, false);
            long end = System.nanoTime();
            lab.deleteSubvolume(target);
            return Format.millis(end - start);
        });
        double[] runs = context.sampler().run("floor: runc run --detach (" + template + ")", warmup, n, i -> {
            var container = lab.prepare(config, source);
            long start = System.nanoTime();
            lab.runc.runDetached(container.id(), container.bundle(), container.bundle().resolve("init.pid"));
            long end = System.nanoTime();
            lab.remove(container);
            return Format.millis(end - start);
        });
        return List.of(
                Figure.of("floor.btrfs_snapshot." + template, name(), "ms",
                        "`btrfs subvolume snapshot` of the " + template + " template alone (CLI)", Stats.of(snapshots)),
                Figure.of("floor.runc_run." + template, name(), "ms",
                        "`runc run --detach` of the service's " + template + " bundle on a fresh snapshot, until it returns",
                        Stats.of(runs)));
    }

    private Figure execFloor(BenchContext context, FloorLab lab) throws Exception {
        var container = lab.prepare(lab.bundleConfigOf("tiny"), context.service().templateSubvolume("tiny"));
        try {
            lab.runc.runDetached(container.id(), container.bundle(), container.bundle().resolve("init.pid"));
            double[] samples = context.sampler().run("floor: runc exec true", context.counts().warmup(),
                    context.counts().floor(), i -> {
                        long start = System.nanoTime();
                        lab.runc.exec(container.id(), "true");
                        return Format.millis(System.nanoTime() - start);
                    });
            return Figure.of("floor.runc_exec_true", name(), "ms", "`runc exec` of `true` in a running tiny container",
                    Stats.of(samples));
        } finally {
            lab.remove(container);
        }
    }

    /** A floor container: its id, bundle directory and root subvolume. */
    private record FloorContainer(SandboxId id, Path bundle, Path root) {
    }

    /**
     * Everything the floors make, under {@code <dataDir>/bench-floors} and
     * {@code <pool>/bench-floors}; closing removes what is left, the cgroup parent included.
     */
    private static final class FloorLab implements AutoCloseable {
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
            this.runc = new Runc(Path.of("/usr/sbin/runc"), work.resolve("runc"), work.resolve("logs"), Duration.ofSeconds(30));
            service.attach(this);
        }

        /** The bundle configuration the service writes for a sandbox of this template. */
        ObjectNode bundleConfigOf(String template) throws IOException {
            Sandbox sandbox = service.create(template);
            try {
                return (ObjectNode) JSON.readTree(service.bundleConfig(sandbox.id()).toFile());
            } finally {
                sandbox.delete();
            }
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

        /** A root snapshot and a copy of the service's config pointing at it, with a cgroup of its own. */
        FloorContainer prepare(ObjectNode serviceConfig, Path template) throws IOException {
            Path root = newSubvolumePath();
            btrfs.snapshot(template, root, false);
            var id = SandboxId.random();
            ObjectNode config = serviceConfig.deepCopy();
            ((ObjectNode) config.path("root")).put("path", root.toString());
            ((ObjectNode) config.path("linux")).put("cgroupsPath", "/" + cgroupParent + "/" + id.value());
            config.put("hostname", id.value());
            Path bundle = Files.createDirectories(work.resolve("bundles").resolve(id.value()));
            JSON.writeValue(bundle.resolve("config.json").toFile(), config);
            containers.add(id);
            everyContainer.add(id);
            return new FloorContainer(id, bundle, root);
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
}
