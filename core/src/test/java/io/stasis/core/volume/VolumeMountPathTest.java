package io.stasis.core.volume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.error.StasisException;
import org.junit.jupiter.api.Test;

/** The rules for where a volume may be mounted inside a sandbox. */
class VolumeMountPathTest {

    @Test
    void plainAbsolutePathsAreAccepted() {
        for (String path : new String[] {"/data", "/root/work", "/mnt/a-b_c.d/e@f+g=h~i", "/procfs", "/devices", "/.stasisx"})
            assertThat(VolumeService.validatePath("volumes[0].path", path)).isEqualTo(path);
    }

    @Test
    void relativeRootDotsEmptySegmentsAndReservedPlacesAreRefused() {
        for (String path : new String[] {"data", "", "/", "/a/../b", "/a/./b", "/a//b", "/a/", "/proc", "/proc/sys", "/dev", "/dev/shm",
                "/sys/fs/cgroup", "/.stasis", "/.stasis/bin", "/etc/resolv.conf", "/a b", "/a:b", "/a\nb"}) {
            assertThatThrownBy(() -> VolumeService.validatePath("volumes[0].path", path)).as(path)
                    .isInstanceOf(StasisException.class).hasMessageContaining("volumes[0].path");
        }
        assertThatThrownBy(() -> VolumeService.validatePath("f", null)).isInstanceOf(StasisException.class);
        assertThatThrownBy(() -> VolumeService.validatePath("f", "/" + "a".repeat(1100))).isInstanceOf(StasisException.class);
    }
}
