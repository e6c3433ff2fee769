package io.stasis.templates;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("root")
class MountsIT {
    @TempDir
    Path dir;

    @AfterEach
    void noMountsLeft() throws Exception {
        Mounts.fromSystem().unmountAllBelow(dir); // even when the test failed: never delete through a mount
        assertThat(MountInfo.read().atOrBelow(dir.toRealPath())).isEmpty();
    }

    @Test
    void unmountsNestedStackedAndBusyMountsDeepestFirst() throws Exception {
        Path proc = Files.createDirectories(dir.resolve("target/proc"));
        Path tmp = Files.createDirectories(dir.resolve("target/with space/tmp"));
        mount("proc", "proc", proc);
        mount("tmpfs", "none", tmp);
        mount("tmpfs", "none", tmp); // stacked on the first
        Path inner = Files.createDirectories(tmp.resolve("inner"));
        mount("tmpfs", "none", inner);
        assertThat(MountInfo.read().atOrBelow(dir.toRealPath())).hasSize(4);

        var unmounted = Mounts.fromSystem().unmountAllBelow(dir.resolve("target"));
        assertThat(unmounted).hasSize(4);
        assertThat(MountInfo.read().atOrBelow(dir.toRealPath())).isEmpty();
        assertThat(Mounts.fromSystem().unmountAllBelow(dir.resolve("target"))).isEmpty();
    }

    private static void mount(String type, String source, Path target) throws Exception {
        var result = ToolRunner.run(List.of(ToolRunner.locate("mount").toString(), "-t", type, source, target.toString()), Duration.ofSeconds(10));
        assertThat(result.exitCode()).as(result.stderrTail()).isZero();
    }
}
