package io.stasis.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.stasis.sdk.CreateSandboxRequest;
import io.stasis.sdk.ExecResult;
import io.stasis.sdk.Sandbox;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Hibernate and resume of a {@code base} sandbox holding ~0, 100 MiB and 1 GiB of memory, through
 * the API, beside CRIU run through runc directly on the same tree.
 *
 * <p>The memory is a python3 process holding a bytes object of that size (every page written, so
 * resident and dumped); "idle" is the sandbox with stasis-init alone. Each cycle hibernates (the
 * processes go to a CRIU image, the sandbox's memory is freed) and resumes (restored from the image,
 * which is still in the page cache); the resident memory is read before every cycle, so a restore
 * that lost the process would show.
 *
 * <p>The floor: a container of the same bundle (template, limits, seccomp, namespaces), started by
 * the benchmark's own runc with the same allocation, then {@code runc checkpoint} (CRIU dump; the
 * cgroup frozen first through its freezer file, as the service does, or CRIU polls the freezer in
 * 100 ms steps) and {@code runc restore --detach} (CRIU restore, eager: the service does not use
 * lazy pages), with the CRIU the service uses.
 */
final class HibernateResume implements Scenario {
    /** The goal for resuming a small sandbox, in milliseconds (it assumes lazy restore). */
    static final double SMALL_RESUME_TARGET_MS = 25;
    /** Room for 1 GiB of python objects and the restore of it. */
    static final int MEMORY_LIMIT_MB = 2048;
    static final List<Size> SIZES = List.of(new Size("idle", 0), new Size("100MB", 100L << 20), new Size("1GB", 1L << 30));
    private static final double MIB = 1 << 20;
    private static final String READY = "/root/.bench-allocated";

    /** A memory size to hold; {@code bytes} 0 is the idle sandbox. */
    record Size(String label, long bytes) {
    }

    @Override
    public String name() {
        return "hibernate";
    }

    @Override
    public ScenarioResult run(BenchContext context) throws Exception {
        var figures = new ArrayList<Figure>();
        Map<String, Object> details = new LinkedHashMap<>();
        Map<String, String> skipped = new LinkedHashMap<>();
        details.put("memoryLimitMb", MEMORY_LIMIT_MB);
        details.put("allocation", "python3 holding b\"Z\" * size (every page written) in a base sandbox; idle: stasis-init alone");
        try (var lab = new FloorLab(context.service())) {
            for (Size size : SIZES) {
                if (size.bytes() > context.maxSize()) {
                    skipped.put(size.label(), "above --max-size " + context.maxSize() + " bytes");
                    context.progress().say("hibernate %s: skipped (above --max-size)", size.label());
                    continue;
                }
                var api = measureApi(context, lab, size);
                figures.addAll(api.figures());
                if (context.runcFloors()) figures.addAll(measureFloor(context, lab, size, api.bundle()));
            }
        }
        if (!skipped.isEmpty()) details.put("skipped", skipped);
        return new ScenarioResult(figures, details);
    }

    /** The API figures, and the bundle the service wrote for the sandbox (the floor starts the same). */
    private record ApiSeries(List<Figure> figures, ObjectNode bundle) {
    }

    private ApiSeries measureApi(BenchContext context, FloorLab lab, Size size) throws Exception {
        var service = context.service();
        Sandbox sandbox = service.create(CreateSandboxRequest.builder().template("base").memoryMb(MEMORY_LIMIT_MB).build());
        try {
            ObjectNode bundle = lab.bundleConfigOfSandbox(sandbox.id());
            if (size.bytes() > 0) {
                requireSuccess(sandbox.exec("sh", "-c", allocate(size.bytes())), "start the allocation");
                requireSuccess(sandbox.exec("sh", "-c", awaitAllocated()), "wait for the allocation");
            }
            int n = context.counts().hibernate();
            double[] hibernates = new double[n];
            double[] images = new double[n];
            double[] resident = new double[n];
            double[] resumes = context.sampler().run("hibernate + resume calls (" + size.label() + ")",
                    context.counts().warmupOfSlowSeries(), n, i -> {
                        long rss = requireHeld(context, sandbox.id(), size);
                        long start = System.nanoTime();
                        JsonNode hibernated = service.live().hibernate(sandbox.id());
                        long slept = System.nanoTime();
                        service.live().resume(sandbox.id());
                        long end = System.nanoTime();
                        if (i >= 0) {
                            hibernates[i] = Format.millis(slept - start);
                            images[i] = hibernated.path("hibernation").path("imageBytes").asLong() / MIB;
                            resident[i] = rss / MIB;
                        }
                        return Format.millis(end - slept);
                    });
            requireHeld(context, sandbox.id(), size); // the last restore kept the memory too
            String label = size.label();
            var resume = Figure.of("hibernate_resume_call." + label, name(), "ms",
                    "POST .../resume of that hibernated sandbox until it answers (restored, init answering)", Stats.of(resumes));
            if (size.bytes() == 0) resume = resume.withTarget(Target.atMost(SMALL_RESUME_TARGET_MS));
            return new ApiSeries(List.of(
                    Figure.of("hibernate_rss." + label, name(), "MiB",
                            context.runcFloors() ? "resident memory of the sandbox's processes before each hibernate (VmRSS summed)"
                                    : "the sandbox's memory cgroup charge before each hibernate (under gVisor the sentry's memory file: "
                                    + "the processes' VmRSS shows only what their stubs map)", Stats.of(resident)),
                    Figure.of("hibernate_call." + label, name(), "ms",
                            "POST /v1/sandboxes/{id}/hibernate of a running base sandbox (" + describe(size) + ") until it answers",
                            Stats.of(hibernates)),
                    resume,
                    Figure.of("hibernate_image." + label, name(), "MiB", "size of the image (CRIU's; runsc's under gVisor: hibernation.imageBytes)",
                            Stats.of(images))), bundle);
        } finally {
            sandbox.delete();
        }
    }

    private List<Figure> measureFloor(BenchContext context, FloorLab lab, Size size, ObjectNode bundle) throws Exception {
        var container = lab.start(bundle, context.service().templateSubvolume("base"));
        try {
            if (size.bytes() > 0) {
                lab.runc.exec(container.id(), "sh", "-c", allocate(size.bytes()));
                lab.runc.exec(container.id(), "sh", "-c", awaitAllocated());
            }
            var freezer = CgroupFreezer.of(lab.cgroupPath(container.id()));
            int n = context.counts().hibernate();
            double[] dumps = new double[n];
            double[] images = new double[n];
            double[] restores = context.sampler().run("floor: criu dump + restore through runc (" + size.label() + ")",
                    context.counts().warmupOfSlowSeries(), n, i -> {
                        requireResident(container.id().value(), size);
                        Path image = lab.newDirectory("images");
                        Path dumpWork = lab.newDirectory("work");
                        Path restoreWork = lab.newDirectory("work");
                        long start = System.nanoTime();
                        freezer.freeze();
                        lab.runc.checkpoint(container.id(), image, dumpWork, false);
                        long dumped = System.nanoTime();
                        FloorLab.openImage(image);
                        long bytes = sizeOf(image);
                        // As the service does after a dump that ended the container: runc's state is gone.
                        if (lab.runc.state(container.id()).isPresent()) lab.runc.deleteForce(container.id());
                        Files.deleteIfExists(container.pidFile());
                        long restoreStart = System.nanoTime();
                        lab.runc.restoreDetached(container.id(), container.bundle(), image, restoreWork, container.pidFile());
                        long end = System.nanoTime();
                        for (Path dir : List.of(image, dumpWork, restoreWork)) PrivateService.deleteTree(dir);
                        if (i >= 0) {
                            dumps[i] = Format.millis(dumped - start);
                            images[i] = bytes / MIB;
                        }
                        return Format.millis(end - restoreStart);
                    });
            requireResident(container.id().value(), size);
            String label = size.label();
            return List.of(
                    Figure.of("floor.criu_dump." + label, name(), "ms",
                            "freezer.state FROZEN + `runc checkpoint` (CRIU dump, container ends) of a floor container of the same "
                                    + "bundle holding the same memory", Stats.of(dumps)),
                    Figure.of("floor.criu_restore." + label, name(), "ms",
                            "`runc restore --detach` (CRIU restore, eager) of that image, until runc returns", Stats.of(restores)),
                    Figure.of("floor.criu_image." + label, name(), "MiB", "size of the floor's CRIU image", Stats.of(images)));
        } finally {
            lab.remove(container);
        }
    }

    /** A shell command that leaves a python3 holding {@code bytes} written bytes, signalling when it has them. */
    static String allocate(long bytes) {
        return "python3 -c 'import time; b = b\"Z\" * " + bytes + "; open(\"" + READY + "\", \"w\").close(); time.sleep(1e9)'"
                + " >/dev/null 2>&1 &";
    }

    /** Waits (at most a minute) until the allocation is done. */
    static String awaitAllocated() {
        return "i=0; while [ ! -e " + READY + " ]; do i=$((i+1)); if [ $i -gt 1200 ]; then exit 1; fi; sleep 0.05; done";
    }

    private static long requireResident(String id, Size size) {
        return requireResident(id, size.bytes());
    }

    /** The resident memory of a sandbox's processes; fails if the allocation ({@code bytes}, 5% spared) is not (or no longer) there. */
    static long requireResident(String id, long bytes) {
        long rss = HostMemory.residentOf(id);
        if (rss < bytes * 0.95)
            throw new IllegalStateException(id + " holds " + rss + " bytes resident, expected at least " + bytes);
        return rss;
    }

    /** The sandbox's memory by what shows it under its runtime: runc's VmRSS, gVisor's cgroup charge. */
    private static long requireHeld(BenchContext context, String id, Size size) {
        return context.runcFloors() ? requireResident(id, size) : requireCharged(id, size.bytes());
    }

    /** The same by the sandbox's memory cgroup charge: a gVisor sandbox's memory is its sentry's memory file. */
    static long requireCharged(String id, long bytes) {
        long charged = HostMemory.cgroupUsage(PrivateService.cgroupOf(id)).orElse(0);
        if (charged < bytes * 0.95)
            throw new IllegalStateException(id + " is charged " + charged + " bytes, expected at least " + bytes);
        return charged;
    }

    static ExecResult requireSuccess(ExecResult result, String what) {
        if (result.exitCode() != 0) throw new IllegalStateException("could not " + what + ": " + result);
        return result;
    }

    private static String describe(Size size) {
        return size.bytes() == 0 ? "idle: stasis-init alone" : size.label() + " held by python3";
    }

    private static long sizeOf(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
