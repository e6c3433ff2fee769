package io.stasis.storage.btrfs;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class BtrfsIoctlTest {
    @Test
    void requestNumbersMatchLinuxBtrfsH() {
        // Values as the C macros expand them on x86_64 (checked against linux/btrfs.h).
        assertThat(BtrfsIoctl.iow(14, 4096)).isEqualTo(0x5000940EL); // BTRFS_IOC_SUBVOL_CREATE
        assertThat(BtrfsIoctl.iow(15, 4096)).isEqualTo(0x5000940FL); // BTRFS_IOC_SNAP_DESTROY
        assertThat(BtrfsIoctl.iow(23, 4096)).isEqualTo(0x50009417L); // BTRFS_IOC_SNAP_CREATE_V2
        assertThat(BtrfsIoctl.iowr(40, 16)).isEqualTo(0xC0109428L); // BTRFS_IOC_QUOTA_CTL
        assertThat(BtrfsIoctl.ior(43, 48)).isEqualTo(0x8030942BL); // BTRFS_IOC_QGROUP_LIMIT
        assertThat(BtrfsIoctl.ior(31, 1024)).isEqualTo(0x8400941FL); // BTRFS_IOC_FS_INFO
        assertThat(BtrfsIoctl.iowr(18, 4096)).isEqualTo(0xD0009412L); // BTRFS_IOC_INO_LOOKUP
    }

    @Test
    void linksWithoutRoot() {
        assertThat(BtrfsIoctl.load()).isPresent();
    }
}
