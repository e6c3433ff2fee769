package io.stasis.host;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HostClaimTest {
    @TempDir
    Path dir;

    @Test
    void aClaimedNameIsRefusedWithItsHolderUntilReleased() {
        var first = HostClaim.take(dir, "network-table", "stasis", "instance A");
        assertThat(first).isInstanceOf(HostClaim.Result.Claimed.class);
        assertThat(HostClaim.take(dir, "network-table", "stasis", "instance B"))
                .isEqualTo(new HostClaim.Result.Taken("instance A"));
        assertThat(HostClaim.take(dir, "network-table", "other", "instance B")).isInstanceOf(HostClaim.Result.Claimed.class);
        ((HostClaim.Result.Claimed) first).claim().close();
        assertThat(HostClaim.take(dir, "network-table", "stasis", "instance B")).isInstanceOf(HostClaim.Result.Claimed.class);
    }

    @Test
    void valuesThatAreNotFileNamesStillGetOneClaimEach() {
        assertThat(HostClaim.take(dir, "network-range", "10.200.0.0/16", "A")).isInstanceOf(HostClaim.Result.Claimed.class);
        assertThat(HostClaim.take(dir, "network-range", "10.200.0.0/16", "B")).isInstanceOf(HostClaim.Result.Taken.class);
        assertThat(dir.toFile().list()).containsExactly("network-range-10.200.0.0_16.lock");
    }
}
