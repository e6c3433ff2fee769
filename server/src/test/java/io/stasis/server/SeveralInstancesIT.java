package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Two services on one host: apart when their network names differ, the second refused (naming the flag) when one is the same. */
@Tag("root")
class SeveralInstancesIT {
    @Test
    void aSecondInstanceWithTheFirstsNetworkNamesIsRefusedAndOneWithItsOwnRuns() throws Exception {
        try (var first = ServiceFixture.start()) {
            var taken = TestNetworkFlags.forDataDir(first.dataDir);
            var otherDir = Files.createTempDirectory("stasis-server-it");
            try {
                assertThatThrownBy(() -> ServiceFixture.startIn(otherDir, taken.toArray(String[]::new)).close())
                        .hasMessageContaining("--network-table " + taken.get(taken.indexOf("--network-table") + 1) + " is in use by")
                        .hasMessageContaining(first.dataDir.toString());
            } finally {
                ServiceFixture.deleteTree(otherDir);
            }
            try (var second = ServiceFixture.start()) {
                var a = first.client.sandboxes().create();
                var b = second.client.sandboxes().create();
                assertThat(a.exec("echo", "a").stdout()).isEqualTo("a\n");
                assertThat(b.exec("echo", "b").stdout()).isEqualTo("b\n");
            }
        }
    }
}
