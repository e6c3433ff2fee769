package io.stasis.templates;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class MountInfoTest {
    @Test
    void listsMountsBelowADirectoryDeepestFirst() {
        var info = MountInfo.parse("""
                22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
                50 22 0:5 / /t/build\\040x/proc rw - proc proc rw
                51 50 0:6 / /t/build\\040x/proc/sys/fs/binfmt_misc rw - binfmt_misc binfmt_misc rw
                52 22 0:7 / /t/build\\040x/sys rw shared:3 master:1 - sysfs sysfs rw
                53 22 0:8 / /t/build\\040xy rw - tmpfs none rw
                """);
        assertThat(info.atOrBelow(Path.of("/t/build x"))).extracting(e -> e.mountPoint().toString()).containsExactly(
                "/t/build x/proc/sys/fs/binfmt_misc", "/t/build x/sys", "/t/build x/proc");
        assertThat(info.atOrBelow(Path.of("/t/build x/sys")).getFirst().fsType()).isEqualTo("sysfs");
    }
}
