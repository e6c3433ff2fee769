package io.stasis.core.network;

import io.stasis.core.error.StasisException;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * A sandbox's network policy as the API sets it: where it may connect, and which headers the
 * egress proxy adds to its HTTPS requests to some of those places ({@link HeaderRule}).
 */
public record NetworkPolicy(EgressPolicy egress, List<HeaderRule> rules) {
    public static final int MAX_RULES = 100;
    /** Stands for "some name below" a wildcard rule's domain when checking that the egress policy allows it. */
    private static final String PROBE_LABEL = "stasis-rule-probe";

    /**
     * @throws StasisException {@code invalid_request} if a rule's domain is not allowed by {@code egress}
     *                         (for a wildcard: if a name below it would not be)
     */
    public NetworkPolicy {
        Objects.requireNonNull(egress);
        rules = List.copyOf(rules);
        if (rules.size() > MAX_RULES) throw StasisException.invalid("network.rules", "holds more than " + MAX_RULES + " rules");
        for (int i = 0; i < rules.size(); i++) {
            var domain = rules.get(i).domain();
            String probe = domain.wildcard() ? PROBE_LABEL + domain.pattern().substring(1) : domain.pattern();
            var decision = egress.forDomain(probe);
            if (!decision.allowed())
                throw StasisException.invalid("network.rules[" + i + "].domain", "'" + domain + "' is not allowed by network.egress ("
                        + decision.rule() + "): a header rule only applies to a domain the sandbox may reach; allow it too");
        }
    }

    public NetworkPolicy(EgressPolicy egress) {
        this(egress, List.of());
    }

    /** The rule for a TLS connection presenting {@code name}: the first whose domain matches. */
    public Optional<HeaderRule> ruleFor(String name) {
        return rules.stream().filter(r -> r.domain().matches(name)).findFirst();
    }

    /** Every secret the rules name. */
    public Set<String> secretNames() {
        var out = new LinkedHashSet<String>();
        rules.forEach(r -> out.addAll(r.secretNames()));
        return out;
    }
}
