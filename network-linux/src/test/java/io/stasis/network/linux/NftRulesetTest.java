package io.stasis.network.linux;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.network.Cidr;
import io.stasis.core.network.EgressPolicy;
import io.stasis.core.network.EgressRule;
import java.time.Duration;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The drop log in the scripts: each refusal is logged by a rule of its own, and logging never decides a packet's fate. */
class NftRulesetTest {
    private static final Pattern VERDICT = Pattern.compile("\\b(accept|drop|reject|jump|goto|return|queue)\\b");
    private final NetworkConfig config = new NetworkConfig(Cidr.parse("10.251.0.0/24", "range"), "tq", "stasis_t", List.of(), Duration.ofSeconds(1), 4242);
    private final NftRuleset rules = new NftRuleset(config);
    private final ServicePorts ports = new ServicePorts(15353, 18080, 18443);

    @ParameterizedTest
    @EnumSource(EgressPolicy.Action.class)
    void everyDropOfASandboxsAttemptFollowsItsOwnLogRule(EgressPolicy.Action defaultAction) {
        var policy = new EgressPolicy(defaultAction, List.of(EgressRule.parse("192.0.2.0/24", "allow")), List.of(EgressRule.parse("198.51.100.0/24", "deny")));
        var opened = new NftRuleset.Opened(new AddressPlan(config.range(), config.interfacePrefix()).attachment(3), policy);
        List<String> lines = (rules.rebuild(ports, List.of(opened))).lines().map(String::strip).toList();

        List<String> drops = lines.stream().filter(l -> l.startsWith("add rule ip stasis_t egress_3 ") && l.endsWith("counter name denied_3 drop")).toList();
        assertThat(drops).hasSize(defaultAction == EgressPolicy.Action.DENY ? 4 : 3);
        for (String drop : drops) {
            String match = drop.substring(0, drop.length() - "counter name denied_3 drop".length());
            String log = lines.get(lines.indexOf(drop) - 1);
            assertThat(log).startsWith(match + "ct state new ").contains(" log prefix \"3 ").endsWith(" group 4242");
        }
        String hostDrop = "iifname \"tq*\" counter drop";
        assertThat(lines.get(lines.indexOf(hostDrop) - 1)).startsWith("iifname \"tq*\" ct state new ").endsWith("log prefix \"- blocked host\" group 4242");
    }

    @ParameterizedTest
    @EnumSource(EgressPolicy.Action.class)
    void logRulesHaveNoVerdictSoTheDropAfterThemAlwaysRuns(EgressPolicy.Action defaultAction) {
        var opened = new NftRuleset.Opened(new AddressPlan(config.range(), config.interfacePrefix()).attachment(1),
                new EgressPolicy(defaultAction, List.of(), List.of()));
        var logRules = rules.rebuild(ports, List.of(opened)).lines().filter(l -> l.contains(" log prefix ")).toList();
        assertThat(logRules).isNotEmpty().allSatisfy(l -> assertThat(VERDICT.matcher(l).find()).as(l).isFalse());
    }

    @ParameterizedTest
    @EnumSource(EgressPolicy.Action.class)
    void whatThePolicyLetsThroughIsCountedOnceAgainstTheSandboxsFlows(EgressPolicy.Action defaultAction) {
        var limited = new NftRuleset(config.withRoutedConnections(7));
        var policy = new EgressPolicy(defaultAction, List.of(EgressRule.parse("192.0.2.0/24", "allow")), List.of());
        var link = new AddressPlan(config.range(), config.interfacePrefix()).attachment(3);
        List<String> lines = limited.rebuild(ports, List.of(new NftRuleset.Opened(link, policy))).lines().map(String::strip).toList();

        assertThat(lines.stream().filter(l -> l.startsWith("add rule ip stasis_t egress_3 ") && l.endsWith(" accept")))
                .as("no new flow accepted but through the count").containsExactly("add rule ip stasis_t egress_3 ct state established,related accept");
        assertThat(lines.stream().filter(l -> l.startsWith("add rule ip stasis_t egress_3 ") && l.endsWith("goto admit_3")))
                .hasSize(defaultAction == EgressPolicy.Action.ALLOW ? 3 : 2);
        assertThat(lines.stream().filter(l -> l.contains("ct count"))).as("each evaluation of a count adds the flow: one rule")
                .containsExactly("add rule ip stasis_t admit_3 ct state new add @flows_3 { ip saddr ct count over 7 } goto over_3");
        assertThat(lines.stream().filter(l -> l.startsWith("add rule ip stasis_t over_3 ")))
                .satisfiesExactly(log -> assertThat(log).contains("log prefix \"3 connection limit 7\""),
                        drop -> assertThat(drop).endsWith("counter name denied_3 drop"));
        assertThat(limited.close(link)).contains("delete chain ip stasis_t admit_3", "delete chain ip stasis_t over_3", "delete set ip stasis_t flows_3");
    }

    @Test
    void aSandboxsRatesArePolicedOnItsLinkBothWaysAndGoWithIt() {
        var link = new AddressPlan(config.range(), config.interfacePrefix()).attachment(4);
        var opened = List.of(new NftRuleset.Opened(link, EgressPolicy.ALLOW_ALL));
        var limited = new NftRuleset(config.withBandwidth(new NetworkConfig.Bandwidth(100_000_000, 8_000_000)));

        assertThat(limited.rebuild(ports, opened).lines().map(String::strip)).contains(
                "add rule ip stasis_t sent_4 limit rate over 12500000 bytes/second drop",
                "add element ip stasis_t sent_jumps { \"tq4\" : jump sent_4 }",
                "add rule ip stasis_t received_4 limit rate over 1000000 bytes/second drop",
                "add element ip stasis_t received_jumps { \"tq4\" : jump received_4 }");
        assertThat(limited.close(link)).contains("delete chain ip stasis_t sent_4", "delete chain ip stasis_t received_4");
        assertThat(rules.rebuild(ports, opened)).as("no limit, no policer").doesNotContain("sent_4", "received_4", "limit rate over");
    }
}
