package io.stasis.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class MountInfoTest {
    private static final String SAMPLE = """
            22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
            43 22 0:39 / /data/btrfs rw,noatime shared:20 - btrfs /dev/loop0 rw,discard=async,space_cache=v2,subvolid=5,subvol=/
            50 43 0:5 / /data/btrfs/templates/.build-base-x/proc rw - proc proc rw
            51 50 0:6 / /data/btrfs/templates/.build-base-x/proc/sys/fs/binfmt_misc rw - binfmt_misc binfmt_misc rw
            52 43 0:7 / /data/btrfs/templates/.build-base-x/sys rw shared:3 master:1 - sysfs sysfs rw
            53 43 0:8 / /data/btrfs/templates/.build-base-xy rw - tmpfs none rw
            60 22 0:40 /sub\\040dir /mnt/with\\040space rw - tmpfs my\\040tmp rw

            61 60 0:41 / /mnt/with\\040space rw - tmpfs stacked rw
            this line is not a mount
            """;

    @Test
    void parsesFieldsAroundOptionalOnes() {
        var info = MountInfo.parse(SAMPLE);
        assertThat(info.entries()).hasSize(8);
        var pool = info.at(Path.of("/data/btrfs")).orElseThrow();
        assertThat(pool.fsType()).isEqualTo("btrfs");
        assertThat(pool.source()).isEqualTo("/dev/loop0");
        assertThat(pool.id()).isEqualTo(43);
        assertThat(pool.parentId()).isEqualTo(22);
        assertThat(pool.root()).isEqualTo("/");
        assertThat(pool.superOptions()).contains("subvolid=5");
        assertThat(info.at(Path.of("/data/btrfs/templates/.build-base-x/sys")).orElseThrow().fsType()).isEqualTo("sysfs");
    }

    @Test
    void toleratesALineWithoutSourceOrOptions() {
        var info = MountInfo.parse("70 22 0:50 / /short rw - tmpfs\n");
        var entry = info.at(Path.of("/short")).orElseThrow();
        assertThat(entry.fsType()).isEqualTo("tmpfs");
        assertThat(entry.source()).isEmpty();
        assertThat(entry.superOptions()).isEmpty();
    }

    @Test
    void unescapesOctal() {
        var info = MountInfo.parse(SAMPLE);
        var first = info.entries().stream().filter(e -> e.id() == 60).findFirst().orElseThrow();
        assertThat(first.mountPoint()).isEqualTo(Path.of("/mnt/with space"));
        assertThat(first.root()).isEqualTo("/sub dir");
        assertThat(first.source()).isEqualTo("my tmp");
        assertThat(MountInfo.unescape("a\\134b\\011c\\012d")).isEqualTo("a\\b\tc\nd");
        assertThat(MountInfo.unescape("trailing\\04")).isEqualTo("trailing\\04");
        assertThat(MountInfo.unescape("not\\08octal")).isEqualTo("not\\08octal");
    }

    @Test
    void atFindsTheTopmostOfStackedMounts() {
        var info = MountInfo.parse(SAMPLE);
        assertThat(info.at(Path.of("/mnt/with space")).orElseThrow().source()).isEqualTo("stacked");
        assertThat(info.at(Path.of("/mnt"))).isEmpty();
    }

    @Test
    void containingPicksTheLongestMountPoint() {
        var info = MountInfo.parse(SAMPLE);
        assertThat(info.containing(Path.of("/data/btrfs/roots/sbx_x")).orElseThrow().fsType()).isEqualTo("btrfs");
        assertThat(info.containing(Path.of("/data")).orElseThrow().fsType()).isEqualTo("ext4");
        assertThat(info.containing(Path.of("/data/btrfsX")).orElseThrow().fsType()).isEqualTo("ext4");
        assertThat(info.containing(Path.of("/mnt/with space/f")).orElseThrow().id()).isEqualTo(61);
    }

    @Test
    void belowListsDeepestFirstAndExcludesTheDirItself() {
        var info = MountInfo.parse(SAMPLE);
        var below = info.below(Path.of("/data/btrfs/templates/.build-base-x"));
        assertThat(below).extracting(e -> e.mountPoint().toString()).containsExactly(
                "/data/btrfs/templates/.build-base-x/proc/sys/fs/binfmt_misc",
                "/data/btrfs/templates/.build-base-x/sys",
                "/data/btrfs/templates/.build-base-x/proc");
        assertThat(info.below(Path.of("/data/btrfs"))).hasSize(4);
        assertThat(info.below(Path.of("/data/btrfs/templates/.build-base-x/proc/sys/fs/binfmt_misc"))).isEmpty();
    }

    @Test
    void atOrBelowAlsoListsTheDirItselfNewestFirst() {
        var info = MountInfo.parse(SAMPLE);
        assertThat(info.atOrBelow(Path.of("/data/btrfs/templates/.build-base-x/sys"))).extracting(MountInfo.Entry::id).containsExactly(52);
        assertThat(info.atOrBelow(Path.of("/mnt/with space"))).extracting(MountInfo.Entry::id).containsExactly(61, 60);
        assertThat(info.atOrBelow(Path.of("/data/btrfs"))).extracting(MountInfo.Entry::id).containsExactly(51, 52, 50, 53, 43);
    }

    @Test
    void readsTheRealTable() {
        assertThat(MountInfo.read().at(Path.of("/"))).isPresent();
    }
}
