package io.stasis.core.network;

import java.net.InetAddress;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Where a sandbox may connect. Deny entries win over allow entries, which win over the default.
 * Domain entries are checked against the names a sandbox resolves through Stasis's DNS and the
 * names its connections present (TLS SNI, HTTP Host); network entries against destination addresses.
 * Some destinations are blocked whatever the policy says (see {@code AlwaysBlocked} in the adapter).
 */
public record EgressPolicy(Action defaultAction, List<EgressRule> allow, List<EgressRule> deny) {
    /** Nothing leaves the sandbox. */
    public static final EgressPolicy DENY_ALL = new EgressPolicy(Action.DENY, List.of(), List.of());
    /** Everything not blocked for every sandbox. */
    public static final EgressPolicy ALLOW_ALL = new EgressPolicy(Action.ALLOW, List.of(), List.of());

    public enum Action {
        ALLOW, DENY;

        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public EgressPolicy {
        allow = List.copyOf(allow);
        deny = List.copyOf(deny);
    }

    /** The decision for a connection to (or a lookup of) a name. */
    public EgressDecision forDomain(String name) {
        Optional<EgressRule> denied = firstDomainMatch(deny, name);
        if (denied.isPresent()) return EgressDecision.deny("deny " + denied.get());
        Optional<EgressRule> allowed = firstDomainMatch(allow, name);
        if (allowed.isPresent()) return EgressDecision.allow("allow " + allowed.get());
        return byDefault();
    }

    /**
     * The decision for a connection to an address whose name is unknown (or, with a name, after
     * {@link #forDomain} allowed it: then only network denies can refuse).
     */
    public EgressDecision forAddress(InetAddress address) {
        Optional<EgressRule> denied = firstNetworkMatch(deny, address);
        if (denied.isPresent()) return EgressDecision.deny("deny " + denied.get());
        Optional<EgressRule> allowed = firstNetworkMatch(allow, address);
        if (allowed.isPresent()) return EgressDecision.allow("allow " + allowed.get());
        return byDefault();
    }

    /** A connection that presented {@code name} (SNI or Host) to {@code address}. */
    public EgressDecision forConnection(String name, InetAddress address) {
        Optional<EgressRule> deniedNetwork = firstNetworkMatch(deny, address);
        if (deniedNetwork.isPresent()) return EgressDecision.deny("deny " + deniedNetwork.get());
        return forDomain(name);
    }

    public EgressDecision byDefault() {
        return defaultAction == Action.ALLOW ? EgressDecision.allow("default allow") : EgressDecision.deny("default deny");
    }

    /** The network entries of a list, for the packet filter. */
    public static List<Cidr> networks(List<EgressRule> rules) {
        return rules.stream().flatMap(r -> r instanceof EgressRule.Network n ? Stream.of(n.cidr()) : Stream.empty()).toList();
    }

    private static Optional<EgressRule> firstDomainMatch(List<EgressRule> rules, String name) {
        return rules.stream().filter(r -> r instanceof EgressRule.Domain d && d.pattern().matches(name)).findFirst();
    }

    private static Optional<EgressRule> firstNetworkMatch(List<EgressRule> rules, InetAddress address) {
        return rules.stream().filter(r -> r instanceof EgressRule.Network n && n.cidr().contains(address)).findFirst();
    }
}
