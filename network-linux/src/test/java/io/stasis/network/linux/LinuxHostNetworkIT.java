package io.stasis.network.linux;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.network.EgressDecisions;
import io.stasis.core.network.Cidr;
import io.stasis.core.network.EgressPolicy;
import io.stasis.core.network.EgressRule;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.host.ToolRunner;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The instance's nftables table for real: installed, a sandbox opened, updated and closed, removed. */
@Tag("root")
class LinuxHostNetworkIT {
    private final String table = "stasis_it" + Long.toString(System.nanoTime() % 100000, 36);
    private final NetworkConfig config = new NetworkConfig(Cidr.parse("10.251.0.0/24", "range"), "tq", table,
            List.of(Cidr.parse("10.252.0.0/16", "allowed")), Duration.ofSeconds(10));
    private final LinuxHostNetwork network = new LinuxHostNetwork(config);

    @AfterEach
    void removeTable() {
        network.removeAll();
    }

    @Test
    void opensUpdatesAndClosesASandboxsRules() throws Exception {
        var id = SandboxId.random();
        network.start(new ServicePorts(15353, 18080, 18443), Map.of(), EgressDecisions.NONE);
        var link = network.attachment(3);
        assertThat(link.hostInterface()).isEqualTo("tq3");
        assertThat(link.gateway().getHostAddress()).isEqualTo("10.251.0.13");
        assertThat(link.address().getHostAddress()).isEqualTo("10.251.0.14");

        network.open(id, link, new EgressPolicy(EgressPolicy.Action.DENY,
                List.of(EgressRule.parse("10.252.1.0/24", "allow"), EgressRule.parse("example.com", "allow")), List.of()));
        assertThat(list()).contains("egress_3", "nat_3", "10.252.1.0/24", "\"tq3\" : jump egress_3");
        assertThat(network.sandboxAt(link.address())).contains(id);
        assertThat(network.domain(id, "example.com").allowed()).isTrue();
        assertThat(network.connection(id, Optional.empty(), InetAddress.getByName("10.252.1.9")).allowed()).isTrue();
        assertThat(network.connection(id, Optional.empty(), InetAddress.getByName("169.254.169.254")).rule()).isEqualTo("blocked link-local");
        assertThat(network.connection(id, Optional.empty(), InetAddress.getByName("10.9.0.1")).rule()).startsWith("blocked private");

        network.resolved(id, "example.com", List.of(InetAddress.getByName("192.0.2.80")), Duration.ofSeconds(30));
        assertThat(list()).contains("192.0.2.80 timeout 5m");
        // A repeated answer renews the address only when it asks for clearly longer than what is left.
        network.resolved(id, "example.com", List.of(InetAddress.getByName("192.0.2.80"), InetAddress.getByName("192.0.2.81")),
                Duration.ofSeconds(30));
        network.resolved(id, "example.com", List.of(InetAddress.getByName("192.0.2.80")), Duration.ofMinutes(20));
        assertThat(list()).contains("192.0.2.80 timeout 20m", "192.0.2.81 timeout 5m");

        network.update(id, new EgressPolicy(EgressPolicy.Action.ALLOW, List.of(), List.of(EgressRule.parse("10.252.2.0/24", "deny"))));
        assertThat(list()).contains("10.252.2.0/24").doesNotContain("10.252.1.0/24").doesNotContain("192.0.2.80");
        assertThat(network.deniedCount(id)).isZero();

        network.close(id);
        assertThat(list()).doesNotContain("egress_3");
        assertThat(network.sandboxAt(link.address())).isEmpty();
    }

    @Test
    void startRebuildsTheTableWithTheSandboxesGiven() throws Exception {
        var id = SandboxId.random();
        var link = network.attachment(5);
        network.start(new ServicePorts(15353, 18080, 18443), Map.of(id, Map.entry(link, EgressPolicy.ALLOW_ALL)), EgressDecisions.NONE);
        network.start(new ServicePorts(15354, 18081, 18444), Map.of(id, Map.entry(link, EgressPolicy.ALLOW_ALL)), EgressDecisions.NONE);
        assertThat(list()).contains("egress_5", "redirect to :18444").doesNotContain(":18443");
    }

    /** Forty sandboxes opened and closed from forty threads at once (their scripts share nft runs, see Nft). */
    @Test
    void concurrentOpensAndClosesAllApply() throws Exception {
        network.start(new ServicePorts(15353, 18080, 18443), Map.of(), EgressDecisions.NONE);
        var ids = new ArrayList<SandboxId>();
        for (int i = 0; i < 40; i++) ids.add(SandboxId.random());
        try (var threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < ids.size(); i++) {
                int slot = i;
                threads.submit(() -> network.open(ids.get(slot), network.attachment(slot), EgressPolicy.ALLOW_ALL));
            }
        }
        String all = list();
        for (int i = 0; i < ids.size(); i++) assertThat(all).contains("chain egress_" + i + " {");
        try (var threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (var id : ids) threads.submit(() -> network.close(id));
        }
        assertThat(list()).doesNotContain("chain egress_");
    }

    /** Scripts applied at once share runs; one that nft refuses fails alone, the others in its batch are applied. */
    @Test
    void nftAppliesConcurrentScriptsTogetherAndAFailureStaysWithItsCaller() throws Exception {
        network.start(new ServicePorts(15353, 18080, 18443), Map.of(), EgressDecisions.NONE);
        var nft = new Nft(Duration.ofSeconds(10));
        var failures = new ConcurrentHashMap<Integer, Throwable>();
        try (var threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < 30; i++) {
                int n = i;
                // Script 13 deletes a counter that does not exist: nft refuses it.
                String script = n == 13 ? "delete counter ip " + table + " nothing_here\n" : "add counter ip " + table + " batch_" + n + "\n";
                threads.submit(() -> {
                    try {
                        nft.apply("script " + n, script);
                    } catch (RuntimeException e) {
                        failures.put(n, e);
                    }
                });
            }
        }
        assertThat(failures.keySet()).containsExactly(13);
        assertThat(failures.get(13)).hasMessageContaining("nft script 13");
        String all = list();
        for (int i = 0; i < 30; i++) if (i != 13) assertThat(all).contains("counter batch_" + i + " {");
        assertThat(nft.runs()).as("runs of nft for 30 scripts, 29 retried alone after the refused batch at worst").isLessThan(60);
    }

    private String list() throws Exception {
        return ToolRunner.run(List.of("nft", "list", "table", "ip", table), Duration.ofSeconds(10)).stdoutText();
    }
}
