package io.stasis.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.network.EgressPolicy;
import io.stasis.core.network.EgressRule;
import io.stasis.core.network.NetworkAttachment;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.HostNetwork;
import java.net.InetAddress;
import java.util.HashSet;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What every {@link HostNetwork} must do with its bookkeeping: slots and their links, which
 * sandboxes are open, and the calls on an unknown sandbox. A backend's test extends this and
 * supplies a fresh network, ready for {@code open}, per test; it also removes what a test left.
 * Whether packets really follow a policy only a real host can show: that stays in the adapter's
 * own tests.
 */
public abstract class HostNetworkSuite {
    /** Network and domain rules, as a policy from the API holds them. */
    protected static final EgressPolicy SOME_RULES = new EgressPolicy(EgressPolicy.Action.DENY,
            List.of(EgressRule.parse("10.252.1.0/24", "allow"), EgressRule.parse("example.com", "allow")),
            List.of(EgressRule.parse("bad.example.com", "deny")));

    private HostNetwork network;

    /** A new network with nothing open, ready for {@link HostNetwork#open}. */
    protected abstract HostNetwork newNetwork();

    protected HostNetwork network() {
        return network;
    }

    @BeforeEach
    void openNetwork() {
        network = newNetwork();
    }

    @Test
    void thereIsRoomForSandboxes() {
        assertThat(network.capacity()).isPositive();
        assertThat(network.listOpen()).isEmpty();
    }

    @Test
    void aSlotsAttachmentIsStable() {
        int last = network.capacity() - 1;
        for (int slot : List.of(0, last)) {
            assertThat(network.attachment(slot)).isEqualTo(network.attachment(slot));
            assertThat(network.attachment(slot).slot()).isEqualTo(slot);
        }
    }

    @Test
    void eachSlotHasALinkOfItsOwn() {
        int slots = Math.min(network.capacity(), 64);
        var links = IntStream.range(0, slots).mapToObj(network::attachment).toList();
        var addresses = new HashSet<InetAddress>();
        for (NetworkAttachment link : links) {
            assertThat(link.address()).as("slot %d", link.slot()).isNotEqualTo(link.gateway());
            assertThat(link.inherited()).isEmpty();
            addresses.add(link.address());
            addresses.add(link.gateway());
        }
        assertThat(addresses).as("addresses and gateways of %d slots", slots).hasSize(2 * slots);
        assertThat(links).extracting(NetworkAttachment::hostInterface).doesNotHaveDuplicates();
    }

    @Test
    void aSlotOutsideTheRangeIsRefused() {
        assertThatThrownBy(() -> network.attachment(-1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> network.attachment(network.capacity())).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void anOpenedSandboxIsListedUntilItIsClosed() {
        var first = SandboxId.random();
        var second = SandboxId.random();
        network.open(first, network.attachment(1), SOME_RULES);
        network.open(second, network.attachment(2), EgressPolicy.ALLOW_ALL);
        assertThat(network.listOpen()).containsExactlyInAnyOrder(first, second);

        network.close(first);
        assertThat(network.listOpen()).containsExactly(second);
        network.close(second);
        assertThat(network.listOpen()).isEmpty();
    }

    @Test
    void anOpenSandboxsPolicyCanBeReplaced() {
        var id = SandboxId.random();
        network.open(id, network.attachment(3), SOME_RULES);
        network.update(id, EgressPolicy.DENY_ALL);
        network.update(id, EgressPolicy.ALLOW_ALL);
        assertThat(network.listOpen()).containsExactly(id);
    }

    /** The SPI does not say; the Linux adapter refuses it: there is no slot to write the rules to. */
    @Test
    void updatingASandboxThatIsNotOpenIsRefused() {
        var id = SandboxId.random();
        assertThatThrownBy(() -> network.update(id, EgressPolicy.ALLOW_ALL)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(id.toString());
        network.open(id, network.attachment(4), SOME_RULES);
        network.close(id);
        assertThatThrownBy(() -> network.update(id, EgressPolicy.ALLOW_ALL)).isInstanceOf(IllegalStateException.class);
        assertThat(network.listOpen()).isEmpty();
    }

    @Test
    void closeIsIdempotent() {
        var id = SandboxId.random();
        network.close(id); // never opened
        network.open(id, network.attachment(5), SOME_RULES);
        network.close(id);
        network.close(id);
        assertThat(network.listOpen()).isEmpty();
    }

    @Test
    void openingAnOpenSandboxAgainReplacesItsRules() {
        var id = SandboxId.random();
        network.open(id, network.attachment(6), SOME_RULES);
        network.open(id, network.attachment(6), EgressPolicy.DENY_ALL);
        assertThat(network.listOpen()).containsExactly(id);
        network.close(id);
        assertThat(network.listOpen()).isEmpty();
    }

    /** A sandbox restored into another slot (its old one was taken meanwhile) is opened there: the old slot is let go. */
    @Test
    void openingAnOpenSandboxInAnotherSlotMovesIt() {
        var id = SandboxId.random();
        var other = SandboxId.random();
        network.open(id, network.attachment(7), SOME_RULES);
        network.open(id, network.attachment(8), SOME_RULES);
        assertThat(network.listOpen()).containsExactly(id);
        network.open(other, network.attachment(7), EgressPolicy.ALLOW_ALL); // the slot left is free again
        assertThat(network.listOpen()).containsExactlyInAnyOrder(id, other);
        network.close(id);
        network.close(other);
        assertThat(network.listOpen()).isEmpty();
    }

    @Test
    void aSandboxCanBeOpenedAgainAfterItWasClosed() {
        var id = SandboxId.random();
        network.open(id, network.attachment(9), SOME_RULES);
        network.close(id);
        network.open(id, network.attachment(9), EgressPolicy.ALLOW_ALL);
        assertThat(network.listOpen()).containsExactly(id);
        network.close(id);
    }

    @Test
    void nothingIsDeniedBeforeTheSandboxSendsAnything() {
        var id = SandboxId.random();
        assertThat(network.deniedCount(id)).as("a sandbox that is not open").isZero();
        network.open(id, network.attachment(10), EgressPolicy.DENY_ALL);
        assertThat(network.deniedCount(id)).isZero();
        network.update(id, SOME_RULES);
        assertThat(network.deniedCount(id)).isZero();
        network.close(id);
        assertThat(network.deniedCount(id)).isZero();
    }
}
