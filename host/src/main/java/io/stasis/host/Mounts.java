package io.stasis.host;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The only class that runs {@code mount} and {@code umount} (util-linux). Every failure is a
 * {@code runtime_failed} {@link StasisException} whose message names the step and the target and
 * quotes the end of the tool's stderr; its details hold {@code step}, {@code target} and, when the
 * tool ran, {@code stderr}.
 */
public final class Mounts {
    private static final Logger log = LoggerFactory.getLogger(Mounts.class);
    /** Mounts can be stacked; each pass of {@link #unmountAllBelow} removes the topmost layer. */
    private static final int MAX_PASSES = 8;

    private final Path mount;
    private final Path umount;
    private final Duration timeout;

    /** {@code mount} and {@code umount} binaries, and how long one call may take. */
    public Mounts(Path mount, Path umount, Duration timeout) {
        this.mount = mount;
        this.umount = umount;
        this.timeout = timeout;
    }

    /** The system's {@code mount} and {@code umount} ({@link ToolRunner#locate}), 60 s per call. */
    public static Mounts fromSystem() {
        return new Mounts(ToolRunner.locate("mount"), ToolRunner.locate("umount"), Duration.ofSeconds(60));
    }

    /**
     * {@code mount -t fsType [-o options] source target}. {@code source} is a device, an image or a
     * name such as {@code none} or {@code proc}, as the filesystem type expects.
     */
    public void mount(String fsType, String source, Path target, List<String> options) {
        var argv = new ArrayList<>(List.of(mount.toString(), "-t", fsType));
        if (!options.isEmpty()) argv.addAll(List.of("-o", String.join(",", options)));
        argv.addAll(List.of(source, target.toString()));
        run("mount", target, argv);
        log.atInfo().addKeyValue("type", fsType).addKeyValue("source", source).addKeyValue("target", target)
                .addKeyValue("options", options).log("mounted");
    }

    /**
     * Mounts an image file through a loop device ({@code -o loop,options}). util-linux sets up the
     * loop device with LO_FLAGS_AUTOCLEAR, so the kernel detaches it when the filesystem is
     * unmounted: nothing to remember across restarts.
     */
    public void mountLoopImage(String fsType, Path image, Path target, List<String> options) {
        var all = new ArrayList<String>();
        all.add("loop");
        all.addAll(options);
        mount(fsType, image.toString(), target, all);
    }

    /**
     * Unmounts the topmost mount at {@code target}. A busy mount is not detached: this fails with
     * the tool's message (e.g. "target is busy") and the mount stays.
     */
    public void unmount(Path target) {
        run("umount", target, List.of(umount.toString(), target.toString()));
        log.atInfo().addKeyValue("target", target).log("unmounted");
    }

    /**
     * Unmounts everything mounted strictly below {@code dir} (stacked mounts included), deepest
     * first; a mount that is busy is detached lazily ({@code umount --lazy}) as a last resort, so
     * the tree can be deleted afterwards. Returns the mount points it unmounted, one per mount (a
     * stacked mount point appears once per layer); empty if there was nothing.
     * <p>On failure: {@code runtime_failed} naming the mount that failed, or what is still mounted.
     *
     * @throws IOException if {@code dir} cannot be resolved (e.g. it does not exist)
     */
    public List<Path> unmountAllBelow(Path dir) throws IOException {
        Path real = dir.toRealPath();
        var done = new ArrayList<Path>();
        for (int pass = 0; pass < MAX_PASSES; pass++) {
            var left = MountInfo.read().below(real);
            if (left.isEmpty()) return done;
            for (var entry : left) {
                if (!tryUnmount(entry.mountPoint())) detach(entry.mountPoint());
                done.add(entry.mountPoint());
                log.atInfo().addKeyValue("mount", entry.mountPoint()).addKeyValue("type", entry.fsType()).log("unmounted leftover");
            }
        }
        var left = MountInfo.read().below(real);
        if (!left.isEmpty())
            throw failure("unmount below", real, "still mounted: " + left.stream().map(MountInfo.Entry::mountPoint).toList(), null, null);
        return done;
    }

    /**
     * Unmounts {@code target}; if it is busy (a process still holds a file in it), detaches it
     * lazily, so it leaves the mount table now and goes away with the last user.
     *
     * @return whether the detach was lazy
     */
    public boolean unmountOrDetach(Path target) {
        if (tryUnmount(target)) return false;
        detach(target);
        return true;
    }

    /** True if unmounted; false if umount ran and refused (typically: busy). */
    private boolean tryUnmount(Path target) {
        var result = start("umount", target, List.of(umount.toString(), target.toString()));
        if (result.exitCode() == 0) return true;
        log.atWarn().addKeyValue("mount", target).addKeyValue("stderr", result.stderrTail()).log("umount failed; detaching lazily");
        return false;
    }

    private void detach(Path target) {
        run("umount --lazy", target, List.of(umount.toString(), "--lazy", target.toString()));
    }

    private void run(String step, Path target, List<String> argv) {
        var result = start(step, target, argv);
        if (result.exitCode() != 0)
            throw failure(step, target, "exit " + result.exitCode() + ": " + result.stderrTail(), result.stderrTail(), null);
    }

    /** Runs the tool; fails only if it could not run to the end. */
    private ToolRunner.Result start(String step, Path target, List<String> argv) {
        try {
            return ToolRunner.run(argv, timeout);
        } catch (IOException e) {
            throw failure(step, target, "could not start " + argv.getFirst() + ": " + e.getMessage(), null, e);
        } catch (ToolRunner.TimedOut e) {
            throw failure(step, target, e.getMessage(), null, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw failure(step, target, "interrupted", null, e);
        }
    }

    private static StasisException failure(String step, Path target, String problem, String stderr, Throwable cause) {
        var details = new LinkedHashMap<String, Object>();
        details.put("step", step);
        details.put("target", target.toString());
        if (stderr != null) details.put("stderr", stderr);
        log.atWarn().addKeyValue("step", step).addKeyValue("target", target).log(problem);
        return new StasisException(ErrorCode.RUNTIME_FAILED, step + " " + target + " failed: " + problem, details, cause);
    }
}
