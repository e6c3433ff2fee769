package io.stasis.host;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.concurrent.AheadOfDemand;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("root")
class ToolCgroupIT {
    /** Sleeps first: a tool is moved just after its start, so what it reads of itself at once may predate the move. */
    private static final List<String> OWN_CPU_CGROUP = List.of("sh", "-c", "sleep 0.2; grep -E '^[0-9]+:([^:]*,)?cpu(,[^:]*)?:' /proc/self/cgroup");

    private final String instance = "it" + ThreadLocalRandom.current().nextInt(1 << 30);

    @AfterEach
    void backToTheServicesCgroup() {
        ToolRunner.runToolsIn(Optional.empty());
    }

    @Test
    void toolsRunInTheCgroupAtItsWeightAndItIsRemovedAtClose() throws Exception {
        var cgroup = ToolCgroup.open(instance, 512).orElseThrow();
        Path dir = cgroup.dir();
        assertThat(Files.readString(dir.resolve("cpu.shares")).strip()).isEqualTo("512");
        assertThat(cpuCgroupOfATool()).doesNotEndWith("/" + ToolCgroup.PREFIX + instance);

        ToolRunner.runToolsIn(Optional.of(cgroup));
        assertThat(cpuCgroupOfATool()).endsWith("/" + ToolCgroup.PREFIX + instance);

        assertThat(Files.readString(dir.resolve(ToolCgroup.BACKGROUND).resolve("cpu.shares")).strip())
                .isEqualTo(Integer.toString(ToolCgroup.BACKGROUND_SHARES));
        assertThat(AheadOfDemand.call(ToolCgroupIT::cpuCgroupOfATool)).as("a tool started ahead of demand")
                .endsWith("/" + ToolCgroup.PREFIX + instance + "/" + ToolCgroup.BACKGROUND);
        assertThat(cpuCgroupOfATool()).as("and the next one, started for a call").endsWith("/" + ToolCgroup.PREFIX + instance);

        ToolRunner.runToolsIn(Optional.empty());
        cgroup.close();
        assertThat(dir).doesNotExist();
    }

    @Test
    void aCgroupRemovedAsIdleByAnotherInstanceIsMadeAgainAtTheNextTool() throws Exception {
        var cgroup = ToolCgroup.open(instance, 512).orElseThrow();
        try {
            Files.delete(cgroup.dir().resolve(ToolCgroup.BACKGROUND));
            Files.delete(cgroup.dir());
            ToolRunner.runToolsIn(Optional.of(cgroup));
            assertThat(AheadOfDemand.call(ToolCgroupIT::cpuCgroupOfATool)).endsWith("/" + ToolCgroup.PREFIX + instance + "/" + ToolCgroup.BACKGROUND);
            assertThat(cpuCgroupOfATool()).endsWith("/" + ToolCgroup.PREFIX + instance);
            assertThat(Files.readString(cgroup.dir().resolve("cpu.shares")).strip()).isEqualTo("512");
        } finally {
            ToolRunner.runToolsIn(Optional.empty());
            cgroup.close();
        }
    }

    @Test
    void openingRemovesTheIdleCgroupsOfKilledInstancesAndLeavesBusyOnes() throws Exception {
        var busy = ToolCgroup.open(instance + "-busy", 512).orElseThrow();
        var idle = ToolCgroup.open(instance + "-idle", 512).orElseThrow();
        var sleeper = ToolRunner.start(new ProcessBuilder("sleep", "30"));
        try {
            busy.enter(sleeper.pid(), false);
            var opened = ToolCgroup.open(instance, 512).orElseThrow();
            assertThat(idle.dir()).doesNotExist();
            assertThat(busy.dir()).exists();
            opened.close();
        } finally {
            sleeper.destroyForcibly().waitFor();
            busy.close();
            idle.close();
        }
        assertThat(busy.dir()).doesNotExist();
    }

    private static String cpuCgroupOfATool() throws Exception {
        var result = ToolRunner.run(OWN_CPU_CGROUP, Duration.ofSeconds(10));
        assertThat(result.exitCode()).isZero();
        return result.stdoutText().strip();
    }
}
