package io.stasis.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

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
 * their own, never the service's ({@link FloorLab}).
 */
final class RawFloors implements Scenario {
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
                    "btrfsQuotaMode", lab.btrfs.quotaMode(context.service().templateSubvolume("tiny")), "cgroupParent", lab.cgroupParent));
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
}
