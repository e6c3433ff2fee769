package io.stasis.network.linux.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.network.EgressDecision;
import io.stasis.core.network.EgressPolicy;
import io.stasis.core.network.EgressRule;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.network.linux.RecordingGate;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class UpstreamChoiceTest {
    private static final SandboxId SANDBOX = SandboxId.random();
    private static final InetSocketAddress ATTACKER = address("203.0.113.66", 443);
    private static final InetAddress REAL = ip("198.51.100.10");
    private static final NameResolver RESOLVER = name -> switch (name) {
        case "allowed.example" -> List.of(ip("2001:db8::1"), REAL, ip("198.51.100.11"));
        case "internal.example" -> List.of(ip("169.254.169.254"));
        case "broken.example" -> throw new IOException("SERVFAIL");
        default -> List.of();
    };

    private final RecordingGate gate = new RecordingGate(Map.of(), new EgressPolicy(EgressPolicy.Action.DENY,
            List.of(rule("allowed.example"), rule("internal.example"), rule("broken.example"), rule("nowhere.example")),
            List.of(rule("169.254.0.0/16"))));

    @Test
    void anAllowedNameGoesWhereItResolvesNotWhereTheSandboxSentIt() {
        assertThat(choose("allowed.example", ATTACKER)).isEqualTo(new UpstreamChoice.Connect(new InetSocketAddress(REAL, 443)));
    }

    @Test
    void theOriginalDestinationStaysWhenTheNameResolvesToIt() {
        var original = address("198.51.100.11", 443);
        assertThat(choose("allowed.example", original)).isEqualTo(new UpstreamChoice.Connect(original));
    }

    @Test
    void aNameResolvingIntoABlockedRangeIsRefused() {
        assertThat(choose("internal.example", ATTACKER)).isEqualTo(new UpstreamChoice.Refuse("deny 169.254.0.0/16"));
    }

    @Test
    void aNameWithoutAddressesIsRefused() {
        assertThat(choose("nowhere.example", ATTACKER)).isEqualTo(new UpstreamChoice.Refuse(UpstreamChoice.UNRESOLVABLE));
        assertThat(choose("broken.example", ATTACKER)).isEqualTo(new UpstreamChoice.Refuse(UpstreamChoice.UNRESOLVABLE));
    }

    @Test
    void noNameOrTheDefaultAllowKeepsTheOriginalDestination() {
        var openGate = new RecordingGate(Map.of(), EgressPolicy.ALLOW_ALL);
        assertThat(UpstreamChoice.choose(openGate, RESOLVER, SANDBOX, Optional.of("allowed.example"),
                openGate.connection(SANDBOX, Optional.of("allowed.example"), ATTACKER.getAddress()), ATTACKER))
                .isEqualTo(new UpstreamChoice.Connect(ATTACKER));
        assertThat(UpstreamChoice.choose(gate, RESOLVER, SANDBOX, Optional.empty(),
                EgressDecision.allow("allow 203.0.113.0/24"), ATTACKER))
                .isEqualTo(new UpstreamChoice.Connect(ATTACKER));
    }

    private UpstreamChoice.Outcome choose(String name, InetSocketAddress original) {
        var decision = gate.connection(SANDBOX, Optional.of(name), original.getAddress());
        assertThat(decision.allowed()).isTrue();
        return UpstreamChoice.choose(gate, RESOLVER, SANDBOX, Optional.of(name), decision, original);
    }

    private static EgressRule rule(String text) {
        return EgressRule.parse(text, "test");
    }

    private static InetSocketAddress address(String ip, int port) {
        return new InetSocketAddress(ip(ip), port);
    }

    private static InetAddress ip(String literal) {
        try {
            return InetAddress.getByName(literal); // literals only: no lookup
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
}
