package io.stasis.network.linux;

import io.stasis.core.network.Cidr;
import io.stasis.core.network.EgressPolicy;
import io.stasis.core.network.NetworkAttachment;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The nftables scripts of one Stasis instance, all in one table of family ip.
 *
 * <p>Base chains hook prerouting (DNS and proxy redirects), input (what a sandbox may reach on the
 * host: the resolver and the proxy), forward (egress, and nothing unsolicited into a sandbox) and
 * postrouting (NAT out). They dispatch on the incoming interface through verdict maps to each
 * sandbox's own chains, {@code nat_<slot>} and {@code egress_<slot>}, which read its sets
 * {@code allow_<slot>}, {@code deny_<slot>} (networks of the policy) and {@code resolved_<slot>}
 * (addresses the resolver gave out for allowed names). A packet whose source is not the address
 * of the interface it came in on is dropped first: root inside cannot pose as another sandbox.
 *
 * <p>Every drop of a sandbox's attempt (egress, and the host's own ports) is preceded by a rule
 * that logs the attempt's first packet to the NFLOG group, with the prefix {@code "<slot> <rule>"}
 * ({@code "-"} for the slot in the shared input chain, where the source address, checked by then,
 * tells the sandbox). The log rule has no verdict: when the rate or its sets are exhausted it just
 * stops matching, and the drop rule after it drops all the same.
 */
final class NftRuleset {
    /** Logs per second, and burst, per sandbox (by source address): a flood cannot swamp the reader. */
    private static final String LOG_RATE = "limit rate 20/second burst 40 packets";
    /**
     * What makes one attempt: a TCP connect's retransmitted SYNs (each {@code ct state new} again,
     * since a dropped packet never confirms its conntrack entry) share it and are logged once. For
     * ICMP the "ports" are type, code and checksum: each ping is an attempt of its own.
     */
    private static final String ATTEMPT = "ip saddr . ip daddr . meta l4proto . th sport . th dport";

    private final String table;
    private final String wildcard;
    private final Cidr range;
    private final List<Cidr> allowedPrivate;
    private final int routedConnections;
    private final NetworkConfig.Bandwidth bandwidth;
    private final int logGroup;

    NftRuleset(NetworkConfig config) {
        this.table = config.table();
        this.wildcard = "\"" + config.interfacePrefix() + "*\"";
        this.range = config.range();
        this.allowedPrivate = config.allowedPrivate();
        this.logGroup = config.logGroup();
        this.routedConnections = config.routedConnections();
        this.bandwidth = config.bandwidth();
    }

    /** Replaces the whole table, atomically, by the base and the sandboxes given. */
    String rebuild(ServicePorts ports, Collection<Opened> sandboxes) {
        var s = new StringBuilder();
        s.append("add table ip ").append(table).append('\n');
        s.append("delete table ip ").append(table).append('\n');
        s.append(base(ports));
        for (Opened o : sandboxes) s.append(open(o, ports));
        return s.toString();
    }

    /** Removes the table (service shut down for good, or tests). */
    String drop() {
        return "add table ip " + table + "\ndelete table ip " + table + "\n";
    }

    private String base(ServicePorts ports) {
        return """
                table ip %1$s {
                    set blocked { type ipv4_addr; flags interval; elements = { %3$s } }
                    set private { type ipv4_addr; flags interval; elements = { %4$s } }
                    set private_allowed { type ipv4_addr; flags interval; }
                    set logged { type ipv4_addr . ipv4_addr . inet_proto . inet_service . inet_service; flags dynamic,timeout; timeout 3m; size 65536; }
                    set log_rate { type ipv4_addr; flags dynamic,timeout; timeout 1m; size 65536; }
                    set sources { type ipv4_addr . ifname; }
                    map nat_jumps { type ifname : verdict; }
                    map egress_jumps { type ifname : verdict; }
                    map sent_jumps { type ifname : verdict; }
                    map received_jumps { type ifname : verdict; }

                    chain sent {
                        type filter hook prerouting priority mangle; policy accept;
                        iifname %2$s iifname vmap @sent_jumps
                    }
                    chain received {
                        type filter hook postrouting priority mangle; policy accept;
                        oifname %2$s oifname vmap @received_jumps
                    }

                    chain prerouting {
                        type nat hook prerouting priority dstnat; policy accept;
                        iifname %2$s iifname vmap @nat_jumps
                    }
                    chain input {
                        type filter hook input priority filter; policy accept;
                        iifname %2$s ip saddr . iifname != @sources counter drop
                        iifname %2$s ct state established,related accept
                        iifname %2$s udp dport %5$d accept
                        iifname %2$s tcp dport { %5$d, %6$d, %7$d } accept
                        iifname %2$s %9$s
                        iifname %2$s counter drop
                        udp dport %5$d drop
                        tcp dport { %5$d, %6$d, %7$d } drop
                    }
                    chain forward {
                        type filter hook forward priority filter; policy accept;
                        iifname %2$s ip saddr . iifname != @sources counter drop
                        oifname %2$s ct state established,related accept
                        oifname %2$s counter drop
                        iifname %2$s iifname vmap @egress_jumps
                        iifname %2$s counter drop
                    }
                    chain postrouting {
                        type nat hook postrouting priority srcnat; policy accept;
                        ip saddr %8$s oifname != %2$s masquerade
                    }
                }
                """.formatted(table, wildcard, elements(blocked()), elements(AlwaysBlocked.PRIVATE), ports.dns(), ports.http(),
                ports.tls(), range, log("-", "blocked host"))
                + (allowedPrivate.isEmpty() ? "" : "add element ip " + table + " private_allowed { " + elements(allowedPrivate) + " }\n");
    }

    private List<Cidr> blocked() {
        var all = new ArrayList<>(AlwaysBlocked.RESERVED);
        all.add(range);
        return all;
    }

    /** A sandbox with rules: its link and its policy. */
    record Opened(NetworkAttachment link, EgressPolicy policy) {
    }

    /** Adds a sandbox's sets, chains and dispatch entries. Only for a sandbox not yet open. */
    String open(Opened o, ServicePorts ports) {
        int n = o.link().slot();
        String iface = "\"" + o.link().hostInterface() + "\"";
        return "add counter ip " + table + " denied_" + n + "\n"
                + "add set ip " + table + " allow_" + n + " { type ipv4_addr; flags interval; auto-merge; }\n"
                + "add set ip " + table + " deny_" + n + " { type ipv4_addr; flags interval; auto-merge; }\n"
                + "add set ip " + table + " resolved_" + n + " { type ipv4_addr; flags timeout; }\n"
                + "add set ip " + table + " flows_" + n + " { type ipv4_addr; size 16; flags dynamic; }\n"
                + "add chain ip " + table + " admit_" + n + "\n"
                + "add chain ip " + table + " over_" + n + "\n"
                + "add chain ip " + table + " egress_" + n + "\n"
                + "add chain ip " + table + " nat_" + n + "\n"
                + policy(n, o.policy(), ports)
                + "add element ip " + table + " sources { " + o.link().address().getHostAddress() + " . " + iface + " }\n"
                + "add element ip " + table + " nat_jumps { " + iface + " : jump nat_" + n + " }\n"
                + "add element ip " + table + " egress_jumps { " + iface + " : jump egress_" + n + " }\n"
                + rates(n, iface);
    }

    /**
     * The sandbox's bandwidth, policed on its link in both directions: everything it sends passes
     * prerouting on its interface, everything it receives postrouting, proxied or routed. nftables'
     * byte limit is a token bucket holding one second of the rate (its finest unit), which is
     * also the burst a sandbox may send or receive at once after a pause.
     */
    private String rates(int n, String iface) {
        var s = new StringBuilder();
        policed().forEach((chain, bytesPerSecond) -> s.append("add chain ip ").append(table).append(' ').append(chain).append(n).append('\n')
                .append("add rule ip ").append(table).append(' ').append(chain).append(n)
                .append(" limit rate over ").append(bytesPerSecond).append(" bytes/second drop\n")
                .append("add element ip ").append(table).append(' ').append(chain).append("jumps { ").append(iface)
                .append(" : jump ").append(chain).append(n).append(" }\n"));
        return s.toString();
    }

    /** The directions with a rate, each as its chains' prefix and its bytes per second. */
    private Map<String, Long> policed() {
        var out = new LinkedHashMap<String, Long>();
        if (bandwidth.egressBitsPerSecond() > 0) out.put("sent_", bandwidth.egressBitsPerSecond() / 8);
        if (bandwidth.ingressBitsPerSecond() > 0) out.put("received_", bandwidth.ingressBitsPerSecond() / 8);
        return out;
    }

    /** Replaces a sandbox's policy: its sets and chains are flushed and refilled in one transaction. */
    String update(int slot, EgressPolicy policy, ServicePorts ports) {
        return policy(slot, policy, ports);
    }

    private String policy(int n, EgressPolicy policy, ServicePorts ports) {
        String t = " ip " + table + " ";
        var s = new StringBuilder();
        for (String set : List.of("allow_", "deny_", "resolved_")) s.append("flush set").append(t).append(set).append(n).append('\n');
        addElements(s, "allow_" + n, EgressPolicy.networks(policy.allow()));
        addElements(s, "deny_" + n, EgressPolicy.networks(policy.deny()));
        String egress = "add rule" + t + "egress_" + n + " ";
        s.append("flush chain").append(t).append("egress_").append(n).append('\n')
                .append(egress).append("ct state established,related accept\n")
                .append(refuse(egress, n, "ip daddr @blocked ", "blocked"))
                .append(refuse(egress, n, "ip daddr @private ip daddr != @private_allowed ", "blocked private"))
                .append(refuse(egress, n, "ip daddr @deny_" + n + " ", "deny"))
                .append(egress).append("ip daddr @allow_").append(n).append(" goto admit_").append(n).append('\n')
                // Names resolve to addresses for TCP only: no UDP or ICMP tunnel to an allowed name's host.
                .append(egress).append("meta l4proto tcp ip daddr @resolved_").append(n).append(" goto admit_").append(n).append('\n')
                .append(policy.defaultAction() == EgressPolicy.Action.ALLOW ? egress + "goto admit_" + n + "\n" : refuse(egress, n, "", "default deny"));
        // What the policy lets through counts against the sandbox's flows (conntrack's count of them, by its address):
        // counted by one rule only, since each evaluation of the count adds the flow again.
        String admit = "add rule" + t + "admit_" + n + " ";
        s.append("flush chain").append(t).append("admit_").append(n).append('\n')
                .append(admit).append("ct state new add @flows_").append(n).append(" { ip saddr ct count over ").append(routedConnections)
                .append(" } goto over_").append(n).append('\n')
                .append(admit).append("accept\n")
                .append("flush chain").append(t).append("over_").append(n).append('\n')
                .append(refuse("add rule" + t + "over_" + n + " ", n, "", "connection limit " + routedConnections));
        String nat = "add rule" + t + "nat_" + n + " ";
        s.append("flush chain").append(t).append("nat_").append(n).append('\n')
                .append(nat).append("fib daddr type local udp dport 53 redirect to :").append(ports.dns()).append('\n')
                .append(nat).append("fib daddr type local tcp dport 53 redirect to :").append(ports.dns()).append('\n')
                .append(nat).append("ip daddr @deny_").append(n).append(" return\n")
                // Networks the policy allows are reached directly, without a name check.
                .append(nat).append("ip daddr @allow_").append(n).append(" return\n")
                .append(nat).append("tcp dport 80 redirect to :").append(ports.http()).append('\n')
                .append(nat).append("tcp dport 443 redirect to :").append(ports.tls()).append('\n');
        return s.toString();
    }

    /** Two rules for one refusal: the log rule, then the drop, counted in the sandbox's counter. */
    private String refuse(String addRule, int slot, String match, String rule) {
        return addRule + match + log(Integer.toString(slot), rule) + "\n"
                + addRule + match + "counter name denied_" + slot + " drop\n";
    }

    /**
     * A new attempt not logged yet, within its sandbox's rate: logged to the NFLOG group with the
     * prefix {@code "<slot> <rule>"}; the reader asks the kernel for the packet's first bytes.
     */
    private String log(String slot, String rule) {
        return "ct state new " + ATTEMPT + " != @logged add @logged { " + ATTEMPT + " } add @log_rate { ip saddr " + LOG_RATE
                + " } log prefix \"" + slot + " " + rule + "\" group " + logGroup;
    }

    /** Removes a sandbox's dispatch entries, chains, sets and counter. */
    String close(NetworkAttachment link) {
        int n = link.slot();
        String iface = "\"" + link.hostInterface() + "\"";
        String t = " ip " + table + " ";
        String rates = policed().keySet().stream()
                .map(chain -> "delete element" + t + chain + "jumps { " + iface + " }\n" + "delete chain" + t + chain + n + "\n")
                .collect(Collectors.joining());
        return rates + "delete element" + t + "egress_jumps { " + iface + " }\n"
                + "delete element" + t + "nat_jumps { " + iface + " }\n"
                + "delete element" + t + "sources { " + link.address().getHostAddress() + " . " + iface + " }\n"
                + "delete chain" + t + "egress_" + n + "\n"
                + "delete chain" + t + "admit_" + n + "\n"
                + "delete chain" + t + "over_" + n + "\n"
                + "delete chain" + t + "nat_" + n + "\n"
                + "delete set" + t + "allow_" + n + "\n"
                + "delete set" + t + "deny_" + n + "\n"
                + "delete set" + t + "resolved_" + n + "\n"
                + "delete set" + t + "flows_" + n + "\n"
                + "delete counter" + t + "denied_" + n + "\n";
    }

    /** Lets the sandbox reach {@code addresses} over TCP for {@code seconds}. */
    String resolved(int slot, Collection<InetAddress> addresses, long seconds) {
        return resolved(slot, addresses, List.of(), seconds);
    }

    /**
     * Like {@link #resolved(int, Collection, long)}, and renews {@code renewed}, addresses already in
     * the set: adding an element that is there keeps its old timeout, so they are deleted and added
     * again in the same transaction (which fails as a whole if one has expired meanwhile).
     */
    String resolved(int slot, Collection<InetAddress> addresses, Collection<InetAddress> renewed, long seconds) {
        String set = " ip " + table + " resolved_" + slot + " { ";
        String all = Stream.concat(addresses.stream(), renewed.stream())
                .map(a -> a.getHostAddress() + " timeout " + seconds + "s").collect(Collectors.joining(", "));
        String script = "";
        if (!renewed.isEmpty())
            script += "delete element" + set + renewed.stream().map(InetAddress::getHostAddress).collect(Collectors.joining(", ")) + " }\n";
        return script + "add element" + set + all + " }\n";
    }

    private void addElements(StringBuilder s, String set, List<Cidr> networks) {
        var v4 = networks.stream().filter(Cidr::isIpv4).toList();
        if (!v4.isEmpty()) s.append("add element ip ").append(table).append(' ').append(set).append(" { ").append(elements(v4)).append(" }\n");
    }

    private static String elements(Collection<Cidr> cidrs) {
        return cidrs.stream().map(Cidr::toString).collect(Collectors.joining(", "));
    }
}
