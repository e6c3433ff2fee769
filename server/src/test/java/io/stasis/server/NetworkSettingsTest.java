package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.network.EgressPolicy;
import io.stasis.network.linux.NetworkConfig;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The network flags of the service: defaults, each flag, and clear refusals. */
class NetworkSettingsTest {

    @Test
    void sandboxesGetANetworkThatReachesNothingByDefault() {
        var network = ServerConfig.parse().network();
        assertThat(network.host()).isPresent();
        assertThat(network.host().get().range().toString()).isEqualTo("10.200.0.0/16");
        assertThat(network.host().get().table()).isEqualTo("stasis");
        assertThat(network.defaultPolicy().egress()).isEqualTo(EgressPolicy.DENY_ALL);
    }

    @Test
    void everyFlagIsApplied() {
        var network = ServerConfig.parse("--network-range", "10.77.0.0/20", "--network-interface-prefix", "tq", "--network-table=stasis_q",
                "--network-allow-private", "10.254.0.0/16, 192.168.5.0/24", "--egress-default", "allow",
                "--egress-deny", "*.example.com,10.9.0.0/16", "--egress-allow", "pypi.org",
                "--dns-names", "a.test=10.254.0.2,10.254.0.6;B.test=10.254.1.2", "--egress-max-connections", "64",
                "--network-log-group", "7777", "--egress-bandwidth", "100mbit", "--ingress-bandwidth", "1gbit").network();
        var host = network.host().orElseThrow();
        assertThat(host.routedConnections()).as("routed flows: as many as proxied connections, kept by later flags").isEqualTo(64);
        assertThat(network.egressLimits().connectionsPerSandbox()).isEqualTo(64);
        assertThat(host.bandwidth()).isEqualTo(new NetworkConfig.Bandwidth(100_000_000, 1_000_000_000));
        assertThat(ServerConfig.parse("--egress-bandwidth", "none").network().host().orElseThrow().bandwidth()).isEqualTo(NetworkConfig.Bandwidth.UNLIMITED);
        for (String bad : List.of("100", "100mb", "-5mbit", "512kbit"))
            assertThatThrownBy(() -> ServerConfig.parse("--egress-bandwidth", bad)).as(bad).isInstanceOf(ServerConfig.UsageException.class)
                    .hasMessageContaining("--egress-bandwidth");
        assertThat(host.range().toString()).isEqualTo("10.77.0.0/20");
        assertThat(host.interfacePrefix()).isEqualTo("tq");
        assertThat(host.table()).isEqualTo("stasis_q");
        assertThat(host.logGroup()).isEqualTo(7777);
        assertThat(host.allowedPrivate()).extracting(Object::toString).containsExactly("10.254.0.0/16", "192.168.5.0/24");
        var egress = network.defaultPolicy().egress();
        assertThat(egress.defaultAction()).isEqualTo(EgressPolicy.Action.ALLOW);
        assertThat(egress.deny()).extracting(Object::toString).containsExactly("*.example.com", "10.9.0.0/16");
        assertThat(egress.allow()).extracting(Object::toString).containsExactly("pypi.org");
        assertThat(network.dnsNames()).containsOnlyKeys("a.test", "b.test");
        assertThat(network.dnsNames().get("a.test")).extracting(a -> a.getHostAddress()).containsExactly("10.254.0.2", "10.254.0.6");
    }

    @Test
    void aBuildReachesTheHostsAptMirrorsUnlessTheOperatorSaysOtherwise() {
        var byDefault = ServerConfig.parse().network().buildPolicy(List.of("mirror.example", "security.example")).egress();
        assertThat(byDefault.defaultAction()).isEqualTo(EgressPolicy.Action.DENY);
        assertThat(byDefault.allow()).extracting(Object::toString).containsExactly("mirror.example", "security.example");
        var given = ServerConfig.parse("--build-egress-allow", "pypi.org,*.pythonhosted.org").network().buildPolicy(List.of("mirror.example"))
                .egress();
        assertThat(given.allow()).extracting(Object::toString).containsExactly("pypi.org", "*.pythonhosted.org");
        assertThat(ServerConfig.parse("--build-egress-allow", "").network().buildPolicy(List.of("mirror.example")).egress().allow()).isEmpty();
        assertThatThrownBy(() -> ServerConfig.parse("--build-egress-allow", "not a domain!")).hasMessageContaining("--build-egress-allow");
    }

    @Test
    void networkNoneLeavesSandboxesWithLoopbackOnly() {
        assertThat(ServerConfig.parse("--network", "none").network().host()).isEmpty();
        assertThat(ServerConfig.parse("--network", "none", "--network-range", "10.1.0.0/16").network().host()).isEmpty();
    }

    @Test
    void badValuesAreRefusedNamingTheFlag() {
        assertThatThrownBy(() -> ServerConfig.parse("--network", "bridge")).hasMessageContaining("--network");
        assertThatThrownBy(() -> ServerConfig.parse("--network-range", "10.0.0.0/30")).hasMessageContaining("--network-range");
        assertThatThrownBy(() -> ServerConfig.parse("--network-range", "banana")).hasMessageContaining("--network-range");
        assertThatThrownBy(() -> ServerConfig.parse("--network-interface-prefix", "Bad-Name")).hasMessageContaining("--network-interface-prefix");
        assertThatThrownBy(() -> ServerConfig.parse("--network-log-group", "70000")).hasMessageContaining("--network-log-group");
        assertThatThrownBy(() -> ServerConfig.parse("--egress-default", "maybe")).hasMessageContaining("--egress-default");
        assertThatThrownBy(() -> ServerConfig.parse("--egress-allow", "not a domain!")).hasMessageContaining("--egress-allow");
        assertThatThrownBy(() -> ServerConfig.parse("--egress-allow", "example.com,fd00::/8")).hasMessageContaining("--egress-allow")
                .hasMessageContaining("IPv6");
        assertThatThrownBy(() -> ServerConfig.parse("--egress-deny", "::/0")).hasMessageContaining("--egress-deny");
        assertThatThrownBy(() -> ServerConfig.parse("--dns-names", "a.test=example.com")).hasMessageContaining("--dns-names");
        assertThatThrownBy(() -> ServerConfig.parse("--dns-names", "a.test")).hasMessageContaining("--dns-names");
    }
}
