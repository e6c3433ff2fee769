package io.stasis.core.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.tenant.QuotaHold;
import io.stasis.core.tenant.TenantId;
import io.stasis.core.tenant.TenantUsage;

import io.stasis.testkit.CatalogFixtures;
import io.stasis.testkit.MutableClock;
import io.stasis.testkit.fake.InMemoryCatalog;
import java.net.URI;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** This node among the others: its registration and lease, what it says of the others, where a new sandbox goes. */
class NodeServiceTest {
    private final MutableClock clock = new MutableClock();
    private final InMemoryCatalog catalog = new InMemoryCatalog(clock);
    private final NodeService nodes = new NodeService(catalog, clock, () -> URI.create("http://10.0.0.1:7070"), Optional::empty,
            () -> new NodeCapacity(1000, 500, 100, 0, NodeLimits.NONE), Duration.ofSeconds(15), true);

    private static final TenantUsage SMALL = new TenantUsage(1, 256, 1024);

    private void other(String name, int leaseSeconds, boolean draining) {
        other(name, leaseSeconds, draining, NodeCapacity.UNKNOWN);
    }

    private void other(String name, int leaseSeconds, boolean draining, NodeCapacity capacity) {
        catalog.putNode(new Node(name, URI.create("http://" + name + ":7070"), Optional.empty(), clock.instant(), clock.instant().plusSeconds(leaseSeconds),
                capacity, draining));
    }

    private static NodeCapacity memory(long totalMb, NodeLimits limits) {
        return new NodeCapacity(totalMb, totalMb, 100_000, 0, limits); // more free disk than this node: it still wins a tie
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
    void aNewSandboxGoesToTheLiveNodeWithTheMostMemoryLeftAndStaysHereOnATie() {
        nodes.start(); // this node: 1000 MB, nothing held
        try {
            other("equal", 60, false, memory(1000, NodeLimits.NONE));
            assertThat(nodes.placeElsewhere(SMALL, Set.of())).as("a tie stays here").isEmpty();
            other("roomy", 60, false, memory(4000, NodeLimits.NONE));
            other("gone", -1, false, memory(64_000, NodeLimits.NONE));
            other("draining", 60, true, memory(64_000, NodeLimits.NONE));
            assertThat(nodes.placeElsewhere(SMALL, Set.of())).map(Node::name).contains("roomy");
            // roomy answered full to this create (it filled since the catalog was read): the next best, here.
            assertThat(nodes.placeElsewhere(SMALL, Set.of("roomy"))).isEmpty();
            other("roomier", 60, false, memory(8000, NodeLimits.NONE));
            assertThat(nodes.placeElsewhere(SMALL, Set.of("roomier"))).map(Node::name).contains("roomy");
            other("roomier", -1, false, memory(8000, NodeLimits.NONE));
            // The operator's limits count over the host's memory: roomy may hold only 500 MB of sandboxes.
            other("roomy", 60, false, memory(4000, new NodeLimits(0, 500)));
            assertThat(nodes.placeElsewhere(SMALL, Set.of())).as("1000 MB left here, 500 there").isEmpty();
            other("roomy", 60, false, memory(4000, new NodeLimits(0, 200)));
            other("equal", 60, false, memory(1000, new NodeLimits(0, 0)));
            assertThat(nodes.placeElsewhere(SMALL, Set.of())).as("roomy has no room for 256 MB").isEmpty();
        } finally {
            nodes.close();
        }
    }

    @Test
    void whatThisNodeHoldsCountsAgainstIt() {
        nodes.start();
        try {
            other("other", 60, false, memory(1000, NodeLimits.NONE));
            catalog.hold(new QuotaHold("qh_1", TenantId.DEFAULT, new TenantUsage(1, 300, 0)), (tenant, node) -> { });
            assertThat(nodes.placeElsewhere(SMALL, Set.of())).map(Node::name).contains("other");
            catalog.releaseHold("qh_1");
            assertThat(nodes.placeElsewhere(SMALL, Set.of())).isEmpty();
        } finally {
            nodes.close();
        }
    }

    @Test
    void aDrainingNodePlacesNothingOnItselfAndSaysSoWhenNoOtherIsAlive() {
        nodes.start();
        try {
            other("gone", -1, false, memory(64_000, NodeLimits.NONE));
            other("draining", 60, true, memory(64_000, NodeLimits.NONE));
            nodes.whileMarked(true, () -> {
                assertThatThrownBy(() -> nodes.placeElsewhere(SMALL, Set.of())).isInstanceOfSatisfying(StasisException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.NODE_UNAVAILABLE));
                other("small", 60, false, memory(100, new NodeLimits(1, 0)));
                assertThat(nodes.placeElsewhere(SMALL, Set.of())).as("even a small one, not this").map(Node::name).contains("small");
                return null;
            });
            var gone = nodes.list().stream().filter(s -> s.node().name().equals("gone")).findFirst().orElseThrow();
            assertThat(gone.alive()).isFalse();
            assertThat(gone.local()).isFalse();
        } finally {
            nodes.close();
        }
    }
}
