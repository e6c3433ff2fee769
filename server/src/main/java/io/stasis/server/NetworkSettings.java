package io.stasis.server;

import io.stasis.core.error.StasisException;
import io.stasis.core.network.Cidr;
import io.stasis.core.network.DomainPattern;
import io.stasis.core.network.EgressPolicy;
import io.stasis.core.network.EgressRule;
import io.stasis.core.network.NetworkPolicy;
import io.stasis.core.policy.Durations;
import io.stasis.network.linux.NetworkConfig;
import io.stasis.network.linux.proxy.EgressLimits;
import java.net.Inet4Address;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The network part of the service's settings.
 *
 * @param host          how sandbox links are laid out on this host; empty with {@code --network none}
 *                      (sandboxes then have loopback only)
 * @param defaultPolicy the policy of a sandbox created without one
 * @param dnsNames      names the sandboxes' resolver answers itself (still subject to each policy)
 * @param upstreamCa    CA certificates (PEM) the egress proxy trusts for upstream servers of intercepted
 *                      names, besides the JDK's (internal CAs; tests)
 */
public record NetworkSettings(Optional<NetworkConfig> host, NetworkPolicy defaultPolicy, Map<String, List<Inet4Address>> dnsNames,
                              Optional<Path> upstreamCa, Optional<List<EgressRule>> buildAllow, EgressLimits egressLimits) {

    public NetworkSettings {
        dnsNames = Map.copyOf(dnsNames);
        buildAllow = buildAllow.map(List::copyOf);
    }

    public NetworkSettings(Optional<NetworkConfig> host, NetworkPolicy defaultPolicy, Map<String, List<Inet4Address>> dnsNames) {
        this(host, defaultPolicy, dnsNames, Optional.empty(), Optional.empty(), EgressLimits.DEFAULTS);
    }

    /**
     * The egress policy of a template build that names none: deny, but for {@code --build-egress-allow},
     * by default the hosts of this host's apt sources (apt in a build on base works where it works
     * on the host).
     */
    public NetworkPolicy buildPolicy(List<String> hostAptMirrors) {
        var allow = buildAllow.orElseGet(() -> hostAptMirrors.stream().map(h -> EgressRule.parse(h, "--build-egress-allow")).toList());
        return new NetworkPolicy(new EgressPolicy(EgressPolicy.Action.DENY, allow, List.of()));
    }

    /** Sandboxes get a network; new ones reach nothing until their policy says otherwise. */
    public static NetworkSettings defaults() {
        return new NetworkSettings(Optional.of(NetworkConfig.defaults()), new NetworkPolicy(EgressPolicy.DENY_ALL), Map.of());
    }

    /** Applies one {@code --network…} or {@code --egress…} flag; empty if the flag is not one of these. */
    Optional<NetworkSettings> with(String flag, String value) {
        var h = host.orElse(NetworkConfig.defaults());
        var egress = defaultPolicy.egress();
        try {
            return Optional.ofNullable(switch (flag) {
                case "--network" -> switch (value) {
                    case "none" -> new NetworkSettings(Optional.empty(), defaultPolicy, dnsNames, upstreamCa, buildAllow, egressLimits);
                    case "host" -> new NetworkSettings(Optional.of(h), defaultPolicy, dnsNames, upstreamCa, buildAllow, egressLimits);
                    default -> throw new ServerConfig.UsageException("--network must be 'host' or 'none', was '" + value + "'");
                };
                case "--network-range" -> withHost(new NetworkConfig(Cidr.parse(value, flag), h.interfacePrefix(), h.table(),
                        h.allowedPrivate(), h.toolTimeout(), h.logGroup(), h.routedConnections(), h.bandwidth()));
                case "--network-interface-prefix" -> withHost(new NetworkConfig(h.range(), value, h.table(), h.allowedPrivate(),
                        h.toolTimeout(), h.logGroup(), h.routedConnections(), h.bandwidth()));
                case "--network-table" -> withHost(new NetworkConfig(h.range(), h.interfacePrefix(), value, h.allowedPrivate(),
                        h.toolTimeout(), h.logGroup(), h.routedConnections(), h.bandwidth()));
                case "--network-allow-private" -> withHost(new NetworkConfig(h.range(), h.interfacePrefix(), h.table(),
                        list(value).stream().map(c -> Cidr.parse(c, flag)).toList(), h.toolTimeout(), h.logGroup(), h.routedConnections(), h.bandwidth()));
                case "--network-log-group" -> withHost(new NetworkConfig(h.range(), h.interfacePrefix(), h.table(), h.allowedPrivate(),
                        h.toolTimeout(), logGroup(value), h.routedConnections(), h.bandwidth()));
                case "--egress-default" -> withEgress(new EgressPolicy(action(value), egress.allow(), egress.deny()));
                case "--egress-allow" -> withEgress(new EgressPolicy(egress.defaultAction(), rules(flag, value), egress.deny()));
                case "--egress-deny" -> withEgress(new EgressPolicy(egress.defaultAction(), egress.allow(), rules(flag, value)));
                case "--dns-names" -> new NetworkSettings(host, defaultPolicy, names(value), upstreamCa, buildAllow, egressLimits);
                case "--egress-upstream-ca" -> new NetworkSettings(host, defaultPolicy, dnsNames, Optional.of(Path.of(value)), buildAllow, egressLimits);
                case "--egress-max-connections" -> {
                    int limit = ServerConfig.integer(flag, value.strip(), 1, 1_000_000);
                    yield new NetworkSettings(host.map(c -> c.withRoutedConnections(limit)), defaultPolicy, dnsNames, upstreamCa, buildAllow,
                            new EgressLimits(limit, egressLimits.idleTimeout()));
                }
                case "--egress-bandwidth" -> withHost(h.withBandwidth(new NetworkConfig.Bandwidth(bitsPerSecond(flag, value),
                        h.bandwidth().ingressBitsPerSecond())));
                case "--ingress-bandwidth" -> withHost(h.withBandwidth(new NetworkConfig.Bandwidth(h.bandwidth().egressBitsPerSecond(),
                        bitsPerSecond(flag, value))));
                case "--egress-idle-timeout" -> new NetworkSettings(host, defaultPolicy, dnsNames, upstreamCa, buildAllow,
                        new EgressLimits(egressLimits.connectionsPerSandbox(), value.equals("never") ? Duration.ZERO : Durations.parse(flag, value)));
                case "--build-egress-allow" -> new NetworkSettings(host, defaultPolicy, dnsNames, upstreamCa, Optional.of(rules(flag, value)), egressLimits);
                default -> null;
            });
        } catch (IllegalArgumentException e) {
            throw new ServerConfig.UsageException(flag + ": " + e.getMessage());
        } catch (StasisException e) {
            throw new ServerConfig.UsageException(flag + ": " + e.getMessage());
        }
    }

    private static final Pattern RATE = Pattern.compile("(\\d{1,9})(k|m|g)bit");

    static final String USAGE = """
              --network host|none      give sandboxes a network (default host) or loopback only
              --network-range CIDR     IPv4 range of sandbox links, a /30 each (default 10.200.0.0/16)
              --network-interface-prefix P  host interface names P0, P1... (default sx)
              --network-table NAME     nftables table of this instance (default stasis)
              --network-allow-private LIST  private ranges (RFC 1918, CGNAT) policies may open (default none)
              --network-log-group N    NFLOG group for dropped-packet events; one per instance on a host (default 7601)
              --egress-default allow|deny   default egress of new sandboxes (default deny)
              --egress-allow LIST      domains (example.com, *.example.com) and CIDRs new sandboxes may reach
              --egress-deny LIST       domains and CIDRs new sandboxes may not reach
              --dns-names NAME=IP[,IP];...  names the sandboxes' resolver answers itself
              --egress-upstream-ca FILE  PEM CA certificates trusted for upstreams of secret header rules, besides the JDK's
              --egress-max-connections N  connections through the egress proxy (HTTP, TLS) a sandbox may have open
                                       at once, and as many routed flows (what its policy lets through
                                       directly: TCP and UDP); more are refused (default 256)
              --egress-bandwidth RATE  what each sandbox may send (e.g. 100mbit, 1gbit, 512kbit; default none):
                                       policed on its link, proxied and routed alike; past it packets drop
              --ingress-bandwidth RATE what each sandbox may receive, the same way (default none)
              --egress-idle-timeout D  a proxied connection idle this long (no byte either way) is closed
                                       (default 15m; never: none)
              --build-egress-allow LIST  domains and CIDRs a template build that names no policy may reach
                                       (default: the hosts of this host's apt sources; '' for none)
            """;

    /** A rate such as {@code 100mbit}, {@code 1gbit} or {@code 512kbit}, in bits per second; {@code 0} or {@code none}: no limit. */
    static long bitsPerSecond(String flag, String value) {
        String v = value.strip().toLowerCase(Locale.ROOT);
        if (v.equals("0") || v.equals("none")) return 0;
        var m = RATE.matcher(v);
        if (!m.matches()) throw new ServerConfig.UsageException(flag + " must be a rate such as 100mbit, 1gbit or 512kbit (or none), was '" + value + "'");
        long unit = switch (m.group(2)) {
            case "k" -> 1_000L;
            case "m" -> 1_000_000L;
            default -> 1_000_000_000L;
        };
        return Long.parseLong(m.group(1)) * unit;
    }

    private NetworkSettings withHost(NetworkConfig config) {
        return new NetworkSettings(host.isPresent() ? Optional.of(config) : Optional.empty(), defaultPolicy, dnsNames, upstreamCa, buildAllow, egressLimits);
    }

    private NetworkSettings withEgress(EgressPolicy egress) {
        return new NetworkSettings(host, new NetworkPolicy(egress), dnsNames, upstreamCa, buildAllow, egressLimits);
    }

    private static int logGroup(String value) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("must be a number 0..65535, was '" + value + "'");
        }
    }

    private static EgressPolicy.Action action(String value) {
        return switch (value.toLowerCase(Locale.ROOT)) {
            case "allow" -> EgressPolicy.Action.ALLOW;
            case "deny" -> EgressPolicy.Action.DENY;
            default -> throw new IllegalArgumentException("must be 'allow' or 'deny', was '" + value + "'");
        };
    }

    /** Domains and IPv4 networks, as a request's policy may hold: IPv6 is off inside sandboxes, so an IPv6 entry could never apply. */
    private static List<EgressRule> rules(String flag, String value) {
        var out = new ArrayList<EgressRule>();
        for (String item : list(value)) {
            var rule = EgressRule.parse(item, flag);
            if (rule instanceof EgressRule.Network n && !n.cidr().isIpv4())
                throw new IllegalArgumentException("'" + item + "' is an IPv6 network; IPv6 is off inside sandboxes: give IPv4 networks");
            out.add(rule);
        }
        return out;
    }

    /** {@code a.test=10.0.0.1,10.0.0.2;b.test=10.0.0.3}: IPv4 literals only, never a lookup. */
    private static Map<String, List<Inet4Address>> names(String value) {
        var out = new LinkedHashMap<String, List<Inet4Address>>();
        for (String entry : value.split(";")) {
            if (entry.isBlank()) continue;
            int eq = entry.indexOf('=');
            if (eq <= 0) throw new IllegalArgumentException("each entry must be NAME=IP[,IP], was '" + entry + "'");
            String name = DomainPattern.parse(entry.substring(0, eq).strip(), "--dns-names").pattern();
            var addresses = new ArrayList<Inet4Address>();
            for (String ip : list(entry.substring(eq + 1))) {
                var cidr = Cidr.parse(ip, "--dns-names");
                if (!cidr.isIpv4() || cidr.prefix() != 32) throw new IllegalArgumentException("'" + ip + "' is not an IPv4 address");
                addresses.add((Inet4Address) cidr.network());
            }
            out.put(name, List.copyOf(addresses));
        }
        return out;
    }

    private static List<String> list(String value) {
        return List.of(value.split(",")).stream().map(String::strip).filter(s -> !s.isEmpty()).toList();
    }
}
