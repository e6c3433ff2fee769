package io.stasis.bench;

import io.stasis.sdk.Sandbox;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Pause and resume of a running {@code tiny} sandbox.
 * <ul>
 *   <li>the API round trips, {@code POST .../pause} and {@code POST .../resume}, each timed alone;</li>
 *   <li>the freeze and thaw themselves: {@code FROZEN} / {@code THAWED} written to the v1
 *       {@code freezer.state} of a <em>second</em> sandbox's cgroup and read back until reached
 *       (the service keeps believing that one runs: it is thawed after every sample);</li>
 *   <li>{@code runc pause} / {@code runc resume} of a floor container of the same bundle, for comparison;</li>
 *   <li>{@code GET /v1/sandboxes/{id}} of the same sandbox, the part of a call that is not the pause
 *       (HTTP, authentication, a catalog read), to show where a pause's time goes.</li>
 * </ul>
 */
final class PauseResume implements Scenario {
    /** The goals, in milliseconds: the API round trip, and the freeze itself. */
    static final double CALL_TARGET_MS = 5;
    static final double FREEZE_TARGET_MS = 1;

    @Override
    public String name() {
        return "pause";
    }

    @Override
    public ScenarioResult run(BenchContext context) throws Exception {
        var service = context.service();
        int n = context.counts().pause();
        int warmup = context.counts().warmup();
        var figures = new ArrayList<Figure>();
        Sandbox driven = service.create("tiny");
        Sandbox frozen = null;
        try {
            double[] pauses = new double[n];
            double[] resumes = context.sampler().run("pause + resume calls", warmup, n, i -> {
                long start = System.nanoTime();
                service.live().pause(driven.id());
                long paused = System.nanoTime();
                service.live().resume(driven.id());
                long end = System.nanoTime();
                if (i >= 0) pauses[i] = Format.millis(paused - start);
                return Format.millis(end - paused);
            });
            figures.add(Figure.of("pause_call", name(), "ms", "POST /v1/sandboxes/{id}/pause of a running tiny sandbox until it answers",
                    Stats.of(pauses)).withTarget(Target.atMost(CALL_TARGET_MS)));
            figures.add(Figure.of("resume_call", name(), "ms", "POST /v1/sandboxes/{id}/resume of that paused sandbox until it answers",
                    Stats.of(resumes)).withTarget(Target.atMost(CALL_TARGET_MS)));
            double[] gets = context.sampler().run("get calls", warmup, n, i -> {
                long start = System.nanoTime();
                service.live().get(driven.id());
                return Format.millis(System.nanoTime() - start);
            });
            figures.add(Figure.of("get_call", name(), "ms",
                    "GET /v1/sandboxes/{id} of the same sandbox: HTTP, authentication and a catalog read, no state change",
                    Stats.of(gets)));

            frozen = service.create("tiny");
            var freezer = CgroupFreezer.of(PrivateService.cgroupOf(frozen.id()));
            try {
                double[] freezes = new double[n];
                double[] thaws = context.sampler().run("freezer.state FROZEN + THAWED", warmup, n, i -> {
                    long start = System.nanoTime();
                    freezer.freeze();
                    long done = System.nanoTime();
                    freezer.thaw();
                    long end = System.nanoTime();
                    if (i >= 0) freezes[i] = Format.millis(done - start);
                    return Format.millis(end - done);
                });
                figures.add(Figure.of("floor.freezer_freeze", name(), "ms",
                        "the freeze itself: FROZEN written to a running tiny sandbox's v1 freezer.state, read back until FROZEN",
                        Stats.of(freezes)).withTarget(Target.atMost(FREEZE_TARGET_MS)));
                figures.add(Figure.of("floor.freezer_thaw", name(), "ms",
                        "the thaw itself: THAWED written to that freezer.state, read back until THAWED",
                        Stats.of(thaws)).withTarget(Target.atMost(FREEZE_TARGET_MS)));
            } finally {
                if (!freezer.isThawed()) freezer.thaw(); // the service must find it as it left it
            }
            if (context.runcFloors()) figures.addAll(runcFloors(context, driven.id()));
        } finally {
            driven.delete();
            if (frozen != null) frozen.delete();
        }
        return new ScenarioResult(figures, Map.of("sandboxProcesses", "stasis-init only (an idle tiny sandbox)"));
    }

    private List<Figure> runcFloors(BenchContext context, String sandboxId) throws Exception {
        try (var lab = new FloorLab(context.service())) {
            var container = lab.start(lab.bundleConfigOfSandbox(sandboxId), context.service().templateSubvolume("tiny"));
            try {
                int n = context.counts().pause();
                double[] pauses = new double[n];
                double[] resumes = context.sampler().run("floor: runc pause + resume", context.counts().warmup(), n, i -> {
                    long start = System.nanoTime();
                    lab.runc.pause(container.id());
                    long paused = System.nanoTime();
                    lab.runc.resume(container.id());
                    long end = System.nanoTime();
                    if (i >= 0) pauses[i] = Format.millis(paused - start);
                    return Format.millis(end - paused);
                });
                return List.of(
                        Figure.of("floor.runc_pause", name(), "ms", "`runc pause` of a running tiny floor container (same bundle)",
                                Stats.of(pauses)),
                        Figure.of("floor.runc_resume", name(), "ms", "`runc resume` of it", Stats.of(resumes)));
            } finally {
                lab.remove(container);
            }
        }
    }
}
