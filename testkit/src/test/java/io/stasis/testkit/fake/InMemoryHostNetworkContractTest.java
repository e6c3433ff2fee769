package io.stasis.testkit.fake;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.network.EgressPolicy;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.HostNetwork;
import io.stasis.testkit.HostNetworkSuite;
import org.junit.jupiter.api.Test;

/** The HostNetwork contract held by the in-memory fake, and what the fake tells tests besides. */
class InMemoryHostNetworkContractTest extends HostNetworkSuite {
    @Override
    protected HostNetwork newNetwork() {
        return new InMemoryHostNetwork();
    }

    private InMemoryHostNetwork fake() {
        return (InMemoryHostNetwork) network();
    }

    @Test
    void thePolicyOfAnOpenSandboxIsTheLastOneGiven() {
        var id = SandboxId.random();
        assertThat(fake().policyOf(id)).isEmpty();
        fake().open(id, fake().attachment(2), SOME_RULES);
        assertThat(fake().policyOf(id)).contains(SOME_RULES);
        assertThat(fake().attachmentOf(id)).contains(fake().attachment(2));
        fake().update(id, EgressPolicy.DENY_ALL);
        assertThat(fake().policyOf(id)).contains(EgressPolicy.DENY_ALL);
        fake().open(id, fake().attachment(2), EgressPolicy.ALLOW_ALL);
        assertThat(fake().policyOf(id)).contains(EgressPolicy.ALLOW_ALL);
        fake().close(id);
        assertThat(fake().policyOf(id)).isEmpty();
    }

    @Test
    void deniedConnectionsAreCountedWhileTheSandboxStaysInItsSlot() {
        var id = SandboxId.random();
        assertThatThrownBy(() -> fake().countDenied(id)).isInstanceOf(IllegalStateException.class);
        fake().open(id, fake().attachment(1), EgressPolicy.DENY_ALL);
        fake().countDenied(id);
        fake().countDenied(id);
        fake().update(id, SOME_RULES);
        fake().open(id, fake().attachment(1), SOME_RULES);
        assertThat(fake().deniedCount(id)).isEqualTo(2);
        fake().open(id, fake().attachment(3), SOME_RULES); // another slot: another counter
        assertThat(fake().deniedCount(id)).isZero();
    }

    @Test
    void theCapacityIsWhatWasAskedFor() {
        var small = new InMemoryHostNetwork(3);
        assertThat(small.capacity()).isEqualTo(3);
        assertThat(small.attachment(2).address().getHostAddress()).isEqualTo("10.200.0.10");
        assertThatThrownBy(() -> new InMemoryHostNetwork(0)).isInstanceOf(IllegalArgumentException.class);
    }
}
