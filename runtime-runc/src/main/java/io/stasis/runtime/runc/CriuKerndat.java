package io.stasis.runtime.runc;

import io.stasis.host.ToolRunner;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * CRIU's cache of what it found out about the kernel ({@value #CACHE}), kept where CRIU looks for
 * it when it cannot keep it itself. Without it every dump and restore probes the kernel again,
 * ~35 ms each here (an idle sandbox's hibernation took 220 ms without it and 160 ms with it, its
 * resume 295 and 225 ms). CRIU loads the file from anywhere but writes it only onto a tmpfs, as a
 * tmpfs {@code /run} forgets it at reboot, when the kernel may change; this host's {@code /run} is
 * on ext4. So the cache is made once per boot in a mount namespace of its own whose {@code /run}
 * is a tmpfs, and copied to {@value #CACHE}; a stamp in the runtime's state directory names the
 * boot and the CRIU binary it was made for, and a later start makes it again when either changed.
 * Where {@code /run} is a tmpfs, CRIU does all this itself and nothing happens here.
 */
final class CriuKerndat {
    private static final Logger log = LoggerFactory.getLogger(CriuKerndat.class);
    static final Path CACHE = Path.of("/run/criu.kdat");
    private static final Path BOOT_ID = Path.of("/proc/sys/kernel/random/boot_id");
    /** Runs in the private mount namespace: $0 is CRIU, $1 where the cache goes. */
    private static final String MAKE = "mount -t tmpfs -o size=1m,mode=0755 stasis-kdat /run && { \"$0\" check >/dev/null 2>&1; cp /run/criu.kdat \"$1\"; }";

    private CriuKerndat() {
    }

    /** Makes sure CRIU finds a cache made for this boot and this binary. Never fails: CRIU works without it, only slower. */
    static void prepare(Path criu, Path stateDir, Duration timeout) {
        try {
            if ("tmpfs".equals(Files.getFileStore(CACHE.getParent()).type())) return;
            String stamp = Files.readString(BOOT_ID).strip() + " " + criu.toRealPath() + " " + Files.size(criu) + " "
                    + Files.getLastModifiedTime(criu).toMillis() + "\n";
            Path stampFile = stateDir.resolve("criu-kdat.stamp");
            if (Files.exists(CACHE) && Files.exists(stampFile) && Files.readString(stampFile).equals(stamp)) return;
            long start = System.nanoTime();
            Path made = stateDir.resolve("criu.kdat.new");
            Files.deleteIfExists(made);
            var result = ToolRunner.run(List.of(ToolRunner.locate("unshare").toString(), "--mount", "--propagation", "private",
                    "sh", "-c", MAKE, criu.toString(), made.toString()), timeout);
            if (result.exitCode() != 0 || !Files.isRegularFile(made)) {
                log.atWarn().addKeyValue("exitCode", result.exitCode()).addKeyValue("stderr", result.stderrTail())
                        .log("CRIU made no kernel feature cache: every dump and restore probes the kernel again");
                return;
            }
            Path next = CACHE.resolveSibling(".criu.kdat.stasis");
            Files.copy(made, next, StandardCopyOption.REPLACE_EXISTING);
            Files.move(next, CACHE, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            Files.delete(made);
            Files.writeString(stampFile, stamp, StandardCharsets.UTF_8);
            log.atInfo().addKeyValue("path", CACHE).addKeyValue("ms", (System.nanoTime() - start) / 1_000_000)
                    .log("CRIU's kernel feature cache made for this boot");
        } catch (IOException | ToolRunner.TimedOut | RuntimeException e) {
            log.atWarn().setCause(e).log("could not make CRIU's kernel feature cache: every dump and restore probes the kernel again");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
