package io.stasis.network.linux;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.network.EgressDecisions;
import io.stasis.core.network.Cidr;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.HostNetwork;
import io.stasis.host.ToolRunner;
import io.stasis.testkit.HostLeaks;
import io.stasis.testkit.HostNetworkSuite;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The HostNetwork contract on this host's nftables: a table of its own per test, removed after it.
 * No link is made (the runtime plugs those), so no packet is sent; enforcement is tested in
 * {@link LinuxHostNetworkIT} and the proxy's and resolver's tests.
 */
@Tag("root")
class LinuxHostNetworkContractIT extends HostNetworkSuite {
    private final String table = "stasis_ct" + Long.toString(System.nanoTime() % 100000, 36);
    private LinuxHostNetwork linux;

    @Override
    protected HostNetwork newNetwork() {
        var config = new NetworkConfig(Cidr.parse("10.251.1.0/24", "range"), "tc", table, List.of(Cidr.parse("10.252.0.0/16", "allowed")),
                Duration.ofSeconds(10));
        linux = new LinuxHostNetwork(config);
        linux.start(new ServicePorts(15353, 18080, 18443), Map.of(), EgressDecisions.NONE);
        return linux;
    }

    @AfterEach
    void removeTable() {
        linux.removeAll();
        assertThat(HostLeaks.nftTables(table)).as("nftables table left").isEmpty();
    }

    /** What the suite's open and close leave in the table: the slot's chains come and go with the sandbox. */
    @Test
    void aClosedSandboxLeavesNoChainOfItsSlot() throws Exception {
        var id = SandboxId.random();
        linux.open(id, linux.attachment(11), SOME_RULES);
        assertThat(HostLeaks.nftTables(table)).containsExactly(table);
        linux.close(id);
        linux.close(id);
        assertThat(ToolRunner.run(List.of("nft", "list", "table", "ip", table), Duration.ofSeconds(10)).stdoutText())
                .doesNotContain("egress_11", "nat_11", "denied_11");
    }
}
