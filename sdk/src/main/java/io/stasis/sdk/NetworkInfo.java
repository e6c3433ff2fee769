package io.stasis.sdk;

import java.util.List;

/**
 * A sandbox's network as {@code GET /v1/sandboxes/{id}/network} reports it, from
 * {@link Sandbox#network()}.
 *
 * <pre>{@code
 * NetworkInfo net = sandbox.network();
 * System.out.println(net.address() + " via " + net.gateway() + ", " + net.deniedConnections() + " refused");
 * sandbox.updateNetwork(net.policy().toBuilder().allow("example.com").build());
 * }</pre>
 *
 * @param sandboxId         the sandbox's id
 * @param enabled           false when the service runs without sandbox networks
 *                          ({@code --network none}): the sandbox has loopback only
 * @param address           the sandbox's IPv4 address, kept across hibernation; null when not enabled
 * @param gateway           the host's end of the sandbox's link; null when not enabled
 * @param dns               the resolver the sandbox uses (Stasis's, on the gateway); null when not enabled
 * @param egress            the egress policy in force
 * @param rules             headers the egress proxy adds for some domains (values as written, placeholders unfilled)
 * @param deniedConnections connections and lookups refused so far
 */
public record NetworkInfo(String sandboxId, boolean enabled, String address, String gateway, String dns,
                          EgressPolicy egress, List<HeaderRule> rules, long deniedConnections) {
    public NetworkInfo {
        if (egress == null) egress = new EgressPolicy(null, null, null);
        rules = rules == null ? List.of() : List.copyOf(rules);
    }

    /**
     * The policy in force, to change with {@link NetworkPolicy#toBuilder()} and
     * {@link Sandbox#updateNetwork}.
     */
    public NetworkPolicy policy() {
        return new NetworkPolicy(egress, rules);
    }
}
