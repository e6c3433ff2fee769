package io.stasis.testkit;

import static io.stasis.testkit.CatalogFixtures.T0;
import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.node.Node;
import io.stasis.core.node.NodeCapacity;
import io.stasis.core.node.NodeLimits;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.spi.Catalog;
import io.stasis.core.tenant.TenantId;
import java.net.URI;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The contract of {@link io.stasis.core.spi.NodeCatalog} on one node: registration, leases, where sandboxes are, a tenant's checkpoints. */
public abstract class NodeCatalogSuite extends CatalogSuiteBase<Catalog> {

    private static Node node(String name, int leaseSeconds) {
        return new Node(name, URI.create("http://" + name + ":7070"), Optional.of(URI.create("http://" + name + ":7071")), T0, T0.plusSeconds(leaseSeconds), new NodeCapacity(4096, 2048, 100_000, 3, NodeLimits.NONE), false);
    }

    @Test
    void nodesRegisterRenewAndListByName() {
        catalog().putNode(node("node-b", 15));
        catalog().putNode(node("node-a", 15));
        assertThat(catalog().nodes()).extracting(Node::name).containsExactly("node-a", "node-b");
        assertThat(catalog().nodes().getFirst()).isEqualTo(node("node-a", 15));

        var capacity = new NodeCapacity(4096, 1000, 90_000, 5, NodeLimits.NONE);
        assertThat(catalog().renewNode("node-a", T0.plusSeconds(30), capacity)).isTrue();
        var renewed = catalog().nodes().getFirst();
        assertThat(renewed.leaseUntil()).isEqualTo(T0.plusSeconds(30));
        assertThat(renewed.capacity()).isEqualTo(capacity);
        assertThat(renewed.startedAt()).isEqualTo(T0);
        assertThat(renewed.alive(T0.plusSeconds(29))).isTrue();
        assertThat(renewed.alive(T0.plusSeconds(30))).isFalse();

        assertThat(catalog().renewNode("never-registered", T0.plusSeconds(30), capacity)).isFalse();
        // Draining is a mark on the node, kept across renewals.
        assertThat(catalog().setDraining("node-a", true)).isTrue();
        assertThat(catalog().renewNode("node-a", T0.plusSeconds(45), capacity)).isTrue();
        assertThat(catalog().nodes().getFirst().draining()).isTrue();
        assertThat(catalog().setDraining("never-registered", true)).isFalse();
        // A restart registers again: the record is replaced.
        var restarted = new Node("node-a", URI.create("http://10.0.0.9:7070"), Optional.empty(), T0.plusSeconds(60), T0.plusSeconds(75), NodeCapacity.UNKNOWN, false);
        catalog().putNode(restarted);
        assertThat(catalog().nodes().getFirst()).isEqualTo(restarted);
    }

    @Test
    void aSandboxIsOnTheNodeThatInsertedItAndCountsThere() {
        var s = CatalogFixtures.running(T0);
        assertThat(catalog().nodeOf(s.id())).isEmpty();
        assertThat(catalog().sandboxCountsByNode()).isEmpty();
        catalog().insert(s);
        catalog().insert(CatalogFixtures.running(T0.plusSeconds(1)));
        assertThat(catalog().nodeOf(s.id())).contains(catalog().localNode());
        assertThat(catalog().sandboxCountsByNode()).containsExactlyEntriesOf(java.util.Map.of(catalog().localNode(), 2));
        catalog().update(s.withState(SandboxState.DELETED));
        assertThat(catalog().sandboxCountsByNode()).containsExactlyEntriesOf(java.util.Map.of(catalog().localNode(), 1));
        assertThat(catalog().nodeOf(new SandboxId("sbx_0000000000000000"))).isEmpty();
    }

    @Test
    void aTenantsCheckpointsAreThoseOfItsSandboxesOldestFirst() {
        var acme = insertTenant("acme");
        var mine = CatalogFixtures.inTenant(CatalogFixtures.running(T0), acme.id());
        var theirs = CatalogFixtures.running(T0);
        catalog().insert(mine);
        catalog().insert(theirs);
        var second = CatalogFixtures.checkpoint(mine.id(), T0.plusSeconds(2));
        var first = CatalogFixtures.checkpoint(mine.id(), T0.plusSeconds(1));
        catalog().insertCheckpoint(second);
        catalog().insertCheckpoint(first);
        catalog().insertCheckpoint(CatalogFixtures.checkpoint(theirs.id(), T0));
        assertThat(catalog().checkpointsOfTenant(acme.id())).containsExactly(first, second);
        assertThat(catalog().checkpointsOfTenant(TenantId.DEFAULT)).hasSize(1);
        catalog().delete(mine.id());
        assertThat(catalog().checkpointsOfTenant(acme.id())).isEmpty();
    }
}
