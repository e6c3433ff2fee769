package io.stasis.runtime.runc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.stasis.host.ToolRunner;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** CRIU's kernel feature cache on a host whose /run is not a tmpfs: made once per boot and binary, and used. */
@Tag("root")
class CriuKerndatIT {
    @TempDir
    Path stateDir;

    @Test
    void theCacheIsMadeOncePerBootAndBinaryAndCriuLoadsIt() throws Exception {
        Path criu = RuncTestHost.criuOrSkip();
        assumeFalse("tmpfs".equals(Files.getFileStore(Path.of("/run")).type()), "/run is a tmpfs: CRIU keeps its cache itself");
        Files.deleteIfExists(CriuKerndat.CACHE);

        CriuKerndat.prepare(criu, stateDir, Duration.ofSeconds(30));
        assertThat(CriuKerndat.CACHE).isRegularFile();
        Path stamp = stateDir.resolve("criu-kdat.stamp");
        assertThat(Files.readString(stamp)).startsWith(Files.readString(Path.of("/proc/sys/kernel/random/boot_id")).strip() + " ");
        assertThat(stateDir.resolve("criu.kdat.new")).doesNotExist();
        var made = FileTime.fromMillis(1_000_000_000L);
        Files.setLastModifiedTime(CriuKerndat.CACHE, made);

        CriuKerndat.prepare(criu, stateDir, Duration.ofSeconds(30));
        assertThat(Files.getLastModifiedTime(CriuKerndat.CACHE)).as("kept: same boot, same binary").isEqualTo(made);

        Files.writeString(stamp, "another-boot " + criu + "\n");
        CriuKerndat.prepare(criu, stateDir, Duration.ofSeconds(30));
        assertThat(Files.getLastModifiedTime(CriuKerndat.CACHE)).as("made again after a reboot").isNotEqualTo(made);

        // CRIU reads it (it says so at debug level) instead of probing the kernel again.
        var check = ToolRunner.run(List.of(criu.toString(), "check", "-v4", "--log-file", stateDir.resolve("check.log").toString()),
                Duration.ofSeconds(30));
        assertThat(check.exitCode()).as(check.stderrTail()).isZero();
        assertThat(Files.readString(stateDir.resolve("check.log"))).contains("Loaded kdat cache from " + CriuKerndat.CACHE);
        assertThat(ToolRunner.run(List.of("grep", "-c", "stasis-kdat", "/proc/mounts"), Duration.ofSeconds(5)).stdoutText().strip())
                .as("the tmpfs it was made on went with its mount namespace").isEqualTo("0");
    }
}
