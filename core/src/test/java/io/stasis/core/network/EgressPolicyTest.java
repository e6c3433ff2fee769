package io.stasis.core.network;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.error.StasisException;
import java.net.InetAddress;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Which entry decides: deny over allow over the default; domains against names, networks against addresses. */
class EgressPolicyTest {

    private static List<EgressRule> rules(String... entries) {
        return Arrays.stream(entries).map(e -> EgressRule.parse(e, "test")).toList();
    }

    private static InetAddress ip(String text) throws Exception {
        return InetAddress.getByName(text);
    }

    @Test
    void denyEntriesWinOverAllowEntriesWhichWinOverTheDefault() throws Exception {
        var policy = new EgressPolicy(EgressPolicy.Action.DENY, rules("*.example.com", "example.com", "192.0.2.0/24"),
                rules("secret.example.com", "192.0.2.128/25"));
        assertThat(policy.forDomain("api.example.com")).isEqualTo(EgressDecision.allow("allow *.example.com"));
        assertThat(policy.forDomain("EXAMPLE.com.")).isEqualTo(EgressDecision.allow("allow example.com"));
        assertThat(policy.forDomain("secret.example.com")).isEqualTo(EgressDecision.deny("deny secret.example.com"));
        assertThat(policy.forDomain("example.org")).isEqualTo(EgressDecision.deny("default deny"));
        assertThat(policy.forAddress(ip("192.0.2.5"))).isEqualTo(EgressDecision.allow("allow 192.0.2.0/24"));
        assertThat(policy.forAddress(ip("192.0.2.200"))).isEqualTo(EgressDecision.deny("deny 192.0.2.128/25"));
        // A name presented to a denied network is refused whatever the name.
        assertThat(policy.forConnection("api.example.com", ip("192.0.2.200")).allowed()).isFalse();
        assertThat(policy.forConnection("api.example.com", ip("198.51.100.1")).allowed()).isTrue();
    }

    @Test
    void aWildcardCoversNamesBelowItButNotTheDomainItself() {
        var pattern = DomainPattern.parse("*.example.com", "test");
        assertThat(pattern.matches("a.example.com")).isTrue();
        assertThat(pattern.matches("a.b.example.com")).isTrue();
        assertThat(pattern.matches("example.com")).isFalse();
        assertThat(pattern.matches("badexample.com")).isFalse();
    }

    @Test
    void entriesAreParsedAsNetworksOrDomainsAndOthersRefused() {
        assertThat(EgressRule.parse("10.0.0.0/8", "f")).isInstanceOf(EgressRule.Network.class);
        assertThat(EgressRule.parse("192.0.2.7", "f").toString()).isEqualTo("192.0.2.7/32");
        assertThat(EgressRule.parse("10.1.2.3/8", "f").toString()).isEqualTo("10.0.0.0/8");
        assertThat(EgressRule.parse("Pypi.ORG", "f").toString()).isEqualTo("pypi.org");
        for (String bad : List.of("", " ", "not a domain", "*.", "a..b", "10.0.0.0/33", "300.1.1.1", "-a.com", "*.*.com", "http://x.com"))
            assertThatThrownBy(() -> EgressRule.parse(bad, "f")).as(bad).isInstanceOf(StasisException.class);
    }
}
