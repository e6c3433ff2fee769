package io.stasis.runtime.runc;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.RuntimeSpec;
import io.stasis.testkit.Commands;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * runc's CRIU is {@code stasis-criu}: it answers runc's question for CRIU's version itself, gives CRIU
 * {@code stasis-tar} as its tar for the sandbox's tmpfs mounts, and hands everything else to CRIU.
 */
@Tag("root")
class StasisCriuIT {
    @TempDir
    Path dir;

    @Test
    void aDumpAndARestoreStartCriuOnceEachAndWork() throws Exception {
        Path criu = RuncTestHost.criuOrSkip();
        // The runtime's CRIU: the real one, each start of it written down first.
        Path starts = dir.resolve("starts");
        Path counting = dir.resolve("criu");
        Files.writeString(counting, "#!/bin/sh\necho \"$*\" >> '" + starts + "'\nexec '" + criu + "' \"$@\"\n");
        Files.setPosixFilePermissions(counting, PosixFilePermissions.fromString("rwxr-xr-x"));
        try (var host = RuncTestHost.withCriu(counting)) {
            var id = SandboxId.random();
            var spec = new RuntimeSpec(id, host.roots.createRoot(id, "tiny", Resources.DEFAULT.diskBytes()), id.hostname(),
                    Resources.DEFAULT, Optional.empty());
            host.runtime.create(spec);
            var image = CheckpointId.random();
            try {
                assertThat(Commands.sh(host.runtime, id, "echo kept > /tmp/mark; echo shared > /dev/shm/mark; chmod 640 /dev/shm/mark; "
                        + "sleep 1000 & echo $! > /tmp/pid").code()).isZero();
                long before = swrkStarts(starts);
                host.runtime.checkpoint(id, image, false);
                var tmpfsImages = tmpfsImages(host.dataDir.resolve("runtime/images").resolve(image.value()));
                assertThat(tmpfsImages).as("the sandbox's tmpfs mounts saved").hasSizeGreaterThanOrEqualTo(2);
                for (Path tmpfs : tmpfsImages)
                    assertThat(Files.readAllBytes(tmpfs)).as(tmpfs + " written by stasis-tar (a gzip comment marks it)").startsWith(0x1f, 0x8b, 8, 0x10);
                host.runtime.restore(spec, image);
                assertThat(Commands.run(host.runtime, id, "cat", "/tmp/mark").stdout()).isEqualTo("kept\n");
                assertThat(Commands.sh(host.runtime, id, "cat /dev/shm/mark; stat -c %a /dev/shm/mark; test -c /dev/null && test -d /dev/pts && echo dev")
                        .stdout()).as("the tmpfs mounts filled again").isEqualTo("shared\n640\ndev\n");
                assertThat(Commands.sh(host.runtime, id, "kill -0 $(cat /tmp/pid)").code()).as("restored processes").isZero();
                assertThat(swrkStarts(starts) - before).as("CRIU started once for the dump and once for the restore; "
                        + "runc's two questions for its version answered without it: " + Files.readAllLines(starts)).isEqualTo(2);
            } finally {
                host.runtime.destroy(id);
                host.runtime.deleteImage(image);
                host.roots.deleteRoot(id);
            }
        }
    }

    private static List<Path> tmpfsImages(Path images) throws IOException {
        try (var files = Files.list(images)) {
            return files.filter(f -> f.getFileName().toString().startsWith("tmpfs-dev-")).toList();
        }
    }

    private static long swrkStarts(Path starts) throws IOException {
        if (!Files.exists(starts)) return 0;
        return Files.readAllLines(starts).stream().filter(line -> line.startsWith("swrk")).count();
    }
}
