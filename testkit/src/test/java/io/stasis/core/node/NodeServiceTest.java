package io.stasis.core.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.testkit.CatalogFixtures;
import io.stasis.testkit.MutableClock;
import io.stasis.testkit.fake.InMemoryCatalog;
import java.net.URI;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** This node among the others: its registration and lease, what it says of the others, where a new sandbox goes while it drains. */
class NodeServiceTest {
    private final MutableClock clock = new MutableClock();
    private final InMemoryCatalog catalog = new InMemoryCatalog(clock);
    private final NodeService nodes = new NodeService(catalog, clock, () -> URI.create("http://10.0.0.1:7070"),
            () -> new NodeCapacity(1000, 500, 100, 0), Duration.ofSeconds(15), true);

    private void other(String name, int leaseSeconds, boolean draining) {
        catalog.putNode(new Node(name, URI.create("http://" + name + ":7070"), clock.instant(), clock.instant().plusSeconds(leaseSeconds),
                NodeCapacity.UNKNOWN, draining));
    }

    @Test
    void aStartRegistersTheNodeAliveAndAStopGivesItsLeaseUp() {
        nodes.start();
        try {
            var self = nodes.list().getFirst();
            assertThat(self.local()).isTrue();
            assertThat(self.alive()).isTrue();
            assertThat(self.node().advertiseUrl()).hasToString("http://10.0.0.1:7070");
            assertThat(self.node().leaseUntil()).isBetween(clock.instant().plusSeconds(14), clock.instant().plusSeconds(15));
            catalog.insert(CatalogFixtures.running(clock.instant()));
            assertThat(nodes.list().getFirst().sandboxes()).isEqualTo(1);
        } finally {
            nodes.close();
        }
        assertThat(nodes.list().getFirst().alive()).as("given up at close").isFalse();
    }

    @Test
    void aDrainingNodePlacesNewSandboxesOnTheLiveNotDrainingOtherWithTheFewest() {
        nodes.start();
        try {
            other("busy", 60, false);
            other("gone", -1, false);
            other("draining", 60, true);
            catalog.insert(CatalogFixtures.running(clock.instant())); // on this node; the others have none
            assertThat(nodes.whileMarked(true, nodes::draining)).isTrue();
            assertThat(nodes.elsewhereForNew()).map(Node::name).contains("busy");
            assertThat(nodes.whileMarked(false, nodes::draining)).isFalse();
        } finally {
            nodes.close();
        }
    }

    @Test
    void onlyTheLiveOthersCanTakeANewSandbox() {
        nodes.start();
        try {
            other("gone", -1, false);
            assertThat(nodes.elsewhereForNew()).isEmpty();
            var gone = nodes.list().stream().filter(s -> s.node().name().equals("gone")).findFirst().orElseThrow();
            assertThat(gone.alive()).isFalse();
            assertThat(gone.local()).isFalse();
        } finally {
            nodes.close();
        }
    }
}
