package io.stasis.storage.btrfs;

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

/** The only class that runs {@code mount} and {@code umount} (util-linux). */
final class Mounts {
    private static final Logger log = LoggerFactory.getLogger(Mounts.class);

    private final Path mount;
    private final Path umount;
    private final Duration timeout;

    Mounts(Path mount, Path umount, Duration timeout) {
        this.mount = mount;
        this.umount = umount;
        this.timeout = timeout;
    }

    static Mounts fromSystem() {
        return new Mounts(ToolRunner.locate("mount"), ToolRunner.locate("umount"), Duration.ofSeconds(60));
    }

    /**
     * Mounts a btrfs image file through a loop device. util-linux sets up the loop device with
     * LO_FLAGS_AUTOCLEAR, so the kernel detaches it when the filesystem is unmounted: nothing to
     * remember across restarts.
     */
    void mountLoopImage(Path image, Path target, List<String> options) {
        var all = new ArrayList<String>();
        all.add("loop");
        all.addAll(options);
        String opts = String.join(",", all);
        run("mount", List.of(mount.toString(), "-t", "btrfs", "-o", opts, image.toString(), target.toString()));
        log.atInfo().addKeyValue("image", image).addKeyValue("target", target).addKeyValue("options", opts).log("mounted");
    }

    /** Unmounts the topmost mount at {@code target}; fails (e.g. busy) with the tool's message. */
    void unmount(Path target) {
        run("umount", List.of(umount.toString(), target.toString()));
        log.atInfo().addKeyValue("target", target).log("unmounted");
    }

    private void run(String step, List<String> argv) {
        try {
            var result = ToolRunner.run(argv, timeout);
            if (result.exitCode() != 0) throw failure(step, argv, "exit " + result.exitCode() + ": " + result.stderrTail(), result.stderrTail(), null);
        } catch (IOException e) {
            throw failure(step, argv, "could not start " + argv.getFirst() + ": " + e.getMessage(), null, e);
        } catch (ToolRunner.TimedOut e) {
            throw failure(step, argv, e.getMessage(), null, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw failure(step, argv, "interrupted", null, e);
        }
    }

    private static StasisException failure(String step, List<String> argv, String problem, String stderr, Throwable cause) {
        var details = new LinkedHashMap<String, Object>();
        details.put("step", step);
        details.put("target", argv.getLast());
        if (stderr != null) details.put("stderr", stderr);
        log.atWarn().addKeyValue("step", step).addKeyValue("argv", argv).log(problem);
        return new StasisException(ErrorCode.RUNTIME_FAILED, step + " " + argv.getLast() + " failed: " + problem, details, cause);
    }
}
