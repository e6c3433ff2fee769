package io.stasis.storage.btrfs;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.host.ToolRunner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loop devices: which ones are backed by a file (read from sysfs, no process) and detaching one;
 * the only class that runs {@code losetup}. Only needed when a loop device outlived its mount (a
 * crash between attach and mount, or a device attached without autoclear).
 */
final class LoopDevices {
    private static final Logger log = LoggerFactory.getLogger(LoopDevices.class);
    private static final Path SYS_BLOCK = Path.of("/sys/block");

    private final Path losetup;
    private final Duration timeout;

    LoopDevices(Path losetup, Duration timeout) {
        this.losetup = losetup;
        this.timeout = timeout;
    }

    static LoopDevices fromSystem() {
        return new LoopDevices(ToolRunner.locate("losetup"), Duration.ofSeconds(30));
    }

    /** The loop devices ({@code /dev/loopN}) whose backing file is {@code file} (an absolute, real path). */
    List<Path> backedBy(Path file) {
        var devices = new ArrayList<Path>();
        try (Stream<Path> blocks = Files.list(SYS_BLOCK)) {
            for (Path block : blocks.filter(b -> b.getFileName().toString().startsWith("loop")).sorted().toList()) {
                Path backing = block.resolve("loop/backing_file");
                if (!Files.isReadable(backing)) continue; // not attached
                String name = Files.readString(backing).strip();
                // The kernel appends " (deleted)" once the file is unlinked.
                if (name.equals(file.toString()) || name.equals(file + " (deleted)"))
                    devices.add(Path.of("/dev").resolve(block.getFileName()));
            }
        } catch (IOException e) {
            log.atWarn().setCause(e).log("cannot list loop devices");
        }
        return devices;
    }

    void detach(Path device) {
        List<String> argv = List.of(losetup.toString(), "--detach", device.toString());
        try {
            var result = ToolRunner.run(argv, timeout);
            if (result.exitCode() != 0)
                throw new StasisException(ErrorCode.RUNTIME_FAILED, "losetup --detach " + device + " failed: exit "
                        + result.exitCode() + ": " + result.stderrTail(),
                        Map.of("step", "losetup detach", "device", device.toString(), "stderr", result.stderrTail()));
            log.atInfo().addKeyValue("device", device).log("loop device detached");
        } catch (IOException | ToolRunner.TimedOut e) {
            throw new StasisException(ErrorCode.RUNTIME_FAILED, "losetup --detach " + device + " failed: " + e.getMessage(),
                    Map.of("step", "losetup detach", "device", device.toString()), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StasisException(ErrorCode.RUNTIME_FAILED, "interrupted detaching " + device,
                    Map.of("step", "losetup detach", "device", device.toString()), e);
        }
    }
}
