package io.stasis.storage.btrfs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class BtrfsPoolConfigTest {
    @Test
    void imageDefaults() {
        var config = BtrfsPoolConfig.image(Path.of("/var/lib/stasis"));
        assertThat(config.imageFile()).isEqualTo(Path.of("/var/lib/stasis/roots.img"));
        assertThat(config.poolPath()).isEqualTo(Path.of("/var/lib/stasis/btrfs"));
        assertThat(config.imageSizeBytes()).isEqualTo(64L << 30);
    }

    @Test
    void existingMountIsThePool() {
        var config = BtrfsPoolConfig.existingMount(Path.of("/var/lib/stasis"), Path.of("/srv/btrfs/stasis/"));
        assertThat(config.poolPath()).isEqualTo(Path.of("/srv/btrfs/stasis"));
    }

    @Test
    void rejectsTinyImages() {
        assertThatThrownBy(() -> BtrfsPoolConfig.image(Path.of("/x"), 1 << 20))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("imageSizeBytes was 1048576");
    }
}
