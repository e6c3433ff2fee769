package io.stasis.storage.btrfs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class MountInfoTest {
    private static final String SAMPLE = """
            22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
            43 22 0:39 / /data/btrfs rw,noatime shared:20 - btrfs /dev/loop0 rw,discard=async,space_cache=v2,subvolid=5,subvol=/
            50 43 0:5 / /data/btrfs/templates/.build-base-x/proc rw - proc proc rw
            51 50 0:6 / /data/btrfs/templates/.build-base-x/proc/sys/fs/binfmt_misc rw - binfmt_misc binfmt_misc rw
            52 43 0:7 / /data/btrfs/templates/.build-base-x/sys rw - sysfs sysfs rw
            60 22 0:40 / /mnt/with\\040space rw - tmpfs none rw
            """;

    @Test
    void parsesFieldsAroundOptionalOnes() {
        var info = MountInfo.parse(SAMPLE);
        assertThat(info.entries()).hasSize(6);
        var pool = info.at(Path.of("/data/btrfs")).orElseThrow();
        assertThat(pool.fsType()).isEqualTo("btrfs");
        assertThat(pool.source()).isEqualTo("/dev/loop0");
        assertThat(pool.id()).isEqualTo(43);
        assertThat(pool.parentId()).isEqualTo(22);
        assertThat(pool.superOptions()).contains("subvolid=5");
    }

    @Test
    void unescapesOctal() {
        var info = MountInfo.parse(SAMPLE);
        assertThat(info.at(Path.of("/mnt/with space"))).isPresent();
        assertThat(MountInfo.unescape("a\\134b\\011c")).isEqualTo("a\\b\tc");
        assertThat(MountInfo.unescape("trailing\\04")).isEqualTo("trailing\\04");
    }

    @Test
    void containingPicksTheLongestMountPoint() {
        var info = MountInfo.parse(SAMPLE);
        assertThat(info.containing(Path.of("/data/btrfs/roots/sbx_x")).orElseThrow().fsType()).isEqualTo("btrfs");
        assertThat(info.containing(Path.of("/data")).orElseThrow().fsType()).isEqualTo("ext4");
        assertThat(info.containing(Path.of("/data/btrfsX")).orElseThrow().fsType()).isEqualTo("ext4");
    }

    @Test
    void belowListsDeepestFirstAndExcludesTheDirItself() {
        var info = MountInfo.parse(SAMPLE);
        var below = info.below(Path.of("/data/btrfs/templates/.build-base-x"));
        assertThat(below).extracting(e -> e.mountPoint().toString()).containsExactly(
                "/data/btrfs/templates/.build-base-x/proc/sys/fs/binfmt_misc",
                "/data/btrfs/templates/.build-base-x/sys",
                "/data/btrfs/templates/.build-base-x/proc");
        assertThat(info.below(Path.of("/data/btrfs"))).hasSize(3);
        assertThat(info.below(Path.of("/data/btrfs/templates/.build-base-x/proc/sys/fs/binfmt_misc"))).isEmpty();
    }

    @Test
    void readsTheRealTable() {
        assertThat(MountInfo.read().at(Path.of("/"))).isPresent();
    }
}
