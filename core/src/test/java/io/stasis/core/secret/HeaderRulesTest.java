package io.stasis.core.secret;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.error.StasisException;
import io.stasis.core.network.EgressPolicy;
import io.stasis.core.network.EgressRule;
import io.stasis.core.network.HeaderRule;
import io.stasis.core.network.NetworkPolicy;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Header rules: placeholder syntax, expansion, header names, and that a rule's domain must be allowed. */
class HeaderRulesTest {

    @Test
    void placeholdersAreFoundAndFilledIn() {
        var t = SecretTemplate.parse("Bearer {{secret:API_TOKEN}} and {{secret:_x1}}{{secret:API_TOKEN}}", "v");
        assertThat(t.secretNames()).containsExactly("API_TOKEN", "_x1");
        assertThat(t.expand(Map.of("API_TOKEN", "A", "_x1", "B"))).contains("Bearer A and BA");
        assertThat(t.expand(Map.of("API_TOKEN", "A"))).isEmpty();
        assertThat(SecretTemplate.parse("plain text", "v").expand(Map.of())).contains("plain text");
        assertThat(t.toString()).isEqualTo(t.text()).doesNotContain("A and");
    }

    @Test
    void anythingElseInBracesOrALineBreakIsRefused() {
        for (String bad : List.of("{{secrets:X}}", "{{secret:1X}}", "{{secret:X}", "a {{ b", "{{secret:" + "A".repeat(65) + "}}",
                "x\r\nEvil: 1", "nul\0"))
            assertThatThrownBy(() -> SecretTemplate.parse(bad, "network.rules[0].headers.X"))
                    .as(bad).isInstanceOf(StasisException.class).hasMessageStartingWith("network.rules[0].headers.X");
    }

    @Test
    void headerNamesMustBeTokensNotFramingAndNotRepeated() {
        assertThat(HeaderRule.of("API.Example.com", Map.of("X-Api-Key", "{{secret:K}}"), "r").domain().pattern()).isEqualTo("api.example.com");
        assertThatThrownBy(() -> HeaderRule.of("a.com", Map.of("Bad Name", "x"), "r")).hasMessageContaining("not a valid header name");
        assertThatThrownBy(() -> HeaderRule.of("a.com", Map.of("Host", "x"), "r")).hasMessageContaining("set by the proxy");
        assertThatThrownBy(() -> HeaderRule.of("a.com", Map.of("Content-Length", "1"), "r")).hasMessageContaining("set by the proxy");
        assertThatThrownBy(() -> HeaderRule.of("a.com", Map.of(), "r")).hasMessageContaining("at least one");
        var twice = new LinkedHashMap<String, String>();
        twice.put("Authorization", "a");
        twice.put("authorization", "b");
        assertThatThrownBy(() -> HeaderRule.of("a.com", twice, "r")).hasMessageContaining("twice");
        assertThatThrownBy(() -> HeaderRule.of("not a domain", Map.of("A", "b"), "r")).hasMessageStartingWith("r.domain");
    }

    @Test
    void aRulesDomainMustBeAllowedByTheEgressPolicy() {
        var rule = HeaderRule.of("api.example.com", Map.of("Authorization", "Bearer {{secret:T}}"), "network.rules[0]");
        var wildcard = HeaderRule.of("*.example.com", Map.of("Authorization", "x"), "network.rules[0]");
        var allowExact = new EgressPolicy(EgressPolicy.Action.DENY, List.of(EgressRule.parse("api.example.com", "a")), List.of());
        var allowBelow = new EgressPolicy(EgressPolicy.Action.DENY, List.of(EgressRule.parse("*.example.com", "a")), List.of());

        assertThat(new NetworkPolicy(allowExact, List.of(rule)).ruleFor("API.example.com.")).contains(rule);
        assertThat(new NetworkPolicy(allowBelow, List.of(rule, wildcard)).ruleFor("x.example.com")).contains(wildcard);
        assertThat(new NetworkPolicy(allowBelow, List.of(rule)).ruleFor("example.com")).isEmpty();
        assertThat(new NetworkPolicy(EgressPolicy.ALLOW_ALL, List.of(rule)).secretNames()).containsExactly("T");

        assertThatThrownBy(() -> new NetworkPolicy(EgressPolicy.DENY_ALL, List.of(rule)))
                .isInstanceOf(StasisException.class).hasMessageContaining("network.rules[0].domain").hasMessageContaining("not allowed by network.egress");
        assertThatThrownBy(() -> new NetworkPolicy(allowExact, List.of(wildcard))).hasMessageContaining("'*.example.com' is not allowed");
        var denied = new EgressPolicy(EgressPolicy.Action.ALLOW, List.of(), List.of(EgressRule.parse("api.example.com", "d")));
        assertThatThrownBy(() -> new NetworkPolicy(denied, List.of(rule))).hasMessageContaining("deny api.example.com");
    }

    @Test
    void theTrustBundleGetsOneStasisBlockWhateverWasThere() {
        String pem = "-----BEGIN CERTIFICATE-----\nAAA\n-----END CERTIFICATE-----\n";
        String other = "-----BEGIN CERTIFICATE-----\nBBB\n-----END CERTIFICATE-----\n";
        String once = TrustStoreFiles.withBlock("", pem);
        assertThat(once).isEqualTo(TrustStoreFiles.BEGIN + pem + TrustStoreFiles.END);
        String withSystem = TrustStoreFiles.withBlock("SYSTEM CA", pem);
        assertThat(withSystem).startsWith("SYSTEM CA\n" + TrustStoreFiles.BEGIN);
        assertThat(TrustStoreFiles.withBlock(withSystem, pem)).isEqualTo(withSystem);
        String replaced = TrustStoreFiles.withBlock(withSystem, other);
        assertThat(replaced).contains("BBB").doesNotContain("AAA");
        assertThat(replaced.indexOf(TrustStoreFiles.BEGIN)).isEqualTo(replaced.lastIndexOf(TrustStoreFiles.BEGIN));
    }
}
