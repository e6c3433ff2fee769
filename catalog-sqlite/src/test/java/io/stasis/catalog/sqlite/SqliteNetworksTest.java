package io.stasis.catalog.sqlite;

import static io.stasis.catalog.sqlite.TestSandboxes.T0;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.error.StasisException;
import io.stasis.core.network.EgressPolicy;
import io.stasis.core.network.EgressRule;
import io.stasis.core.network.NetworkPolicy;
import io.stasis.core.network.SandboxNetwork;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The sandbox_networks table: round trips of policies, unique slots, and rows that go with their sandbox. */
class SqliteNetworksTest extends FreshCatalog {
    private static NetworkPolicy policy(String... allow) {
        return new NetworkPolicy(new EgressPolicy(EgressPolicy.Action.DENY,
                Arrays.stream(allow).map(a -> EgressRule.parse(a, "allow")).toList(), List.of(EgressRule.parse("10.9.0.0/16", "deny"))));
    }

    @Test
    void roundTripsAndUpdatesAPolicy() {
        var sandbox = TestSandboxes.running(T0);
        catalog.insert(sandbox);
        var network = new SandboxNetwork(sandbox.id(), 3, policy("example.com", "*.pypi.example", "192.0.2.0/24"));
        catalog.insertNetwork(network);
        assertThat(catalog.findNetwork(sandbox.id())).contains(network);

        var changed = network.withPolicy(new NetworkPolicy(EgressPolicy.ALLOW_ALL));
        catalog.updateNetwork(changed);
        assertThat(catalog.findNetwork(sandbox.id())).contains(changed);
        assertThat(catalog.allNetworks()).containsExactly(changed);
    }

    @Test
    void aSlotIsHeldByOneSandboxAndFreedWithIt() {
        var a = TestSandboxes.running(T0);
        var b = TestSandboxes.running(T0.plusSeconds(1));
        catalog.insert(a);
        catalog.insert(b);
        catalog.insertNetwork(new SandboxNetwork(a.id(), 0, policy()));
        assertThatThrownBy(() -> catalog.insertNetwork(new SandboxNetwork(b.id(), 0, policy()))).isInstanceOf(StasisException.class);

        catalog.delete(a.id());
        assertThat(catalog.findNetwork(a.id())).isEmpty();
        catalog.insertNetwork(new SandboxNetwork(b.id(), 0, policy()));
        assertThat(catalog.allNetworks()).extracting(SandboxNetwork::id).containsExactly(b.id());
        catalog.deleteNetwork(b.id());
        catalog.deleteNetwork(b.id());
        assertThat(catalog.allNetworks()).isEmpty();
    }
}
