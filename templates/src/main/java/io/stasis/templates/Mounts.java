package io.stasis.templates;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The only class of this module that runs {@code umount}. */
final class Mounts {
    private static final Logger log = LoggerFactory.getLogger(Mounts.class);
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    /** Mounts can be stacked; each pass removes the topmost layer. */
    private static final int MAX_PASSES = 8;

    private final Path umount;

    Mounts(Path umount) {
        this.umount = umount;
    }

    static Mounts fromSystem() {
        return new Mounts(ToolRunner.locate("umount"));
    }

    /**
     * Unmounts everything mounted strictly below {@code dir}, deepest first; a busy mount is
     * detached lazily as a last resort. Returns the mount points it unmounted.
     * <p>On failure: {@code runtime_failed} naming what is still mounted.
     */
    List<Path> unmountAllBelow(Path dir) throws IOException {
        Path real = dir.toRealPath();
        var done = new ArrayList<Path>();
        for (int pass = 0; pass < MAX_PASSES; pass++) {
            var left = below(real);
            if (left.isEmpty()) return done;
            for (var mount : left) {
                if (!unmount(mount.mountPoint(), false)) unmount(mount.mountPoint(), true);
                done.add(mount.mountPoint());
                log.atInfo().addKeyValue("mount", mount.mountPoint()).addKeyValue("type", mount.fsType()).log("unmounted leftover");
            }
        }
        var left = below(real);
        if (!left.isEmpty())
            throw Failures.tool("unmount below " + real, "still mounted: " + left.stream().map(MountInfo.Entry::mountPoint).toList());
        return done;
    }

    private static List<MountInfo.Entry> below(Path dir) {
        return MountInfo.read().atOrBelow(dir).stream().filter(e -> !e.mountPoint().equals(dir)).toList();
    }

    /** True if unmounted; false if it failed and {@code lazy} was not set. */
    private boolean unmount(Path target, boolean lazy) {
        var argv = new ArrayList<String>(List.of(umount.toString()));
        if (lazy) argv.add("--lazy");
        argv.add(target.toString());
        try {
            var result = ToolRunner.run(argv, TIMEOUT);
            if (result.exitCode() == 0) return true;
            if (!lazy) {
                log.atWarn().addKeyValue("mount", target).addKeyValue("stderr", result.stderrTail()).log("umount failed; detaching lazily");
                return false;
            }
            throw Failures.tool("umount " + target, "exit " + result.exitCode() + ": " + result.stderrTail(),
                    Map.of("stderr", result.stderrTail()), null);
        } catch (IOException | ToolRunner.TimedOut e) {
            throw Failures.tool("umount " + target, e.getMessage(), Map.of(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw Failures.tool("umount " + target, "interrupted", Map.of(), e);
        }
    }
}
