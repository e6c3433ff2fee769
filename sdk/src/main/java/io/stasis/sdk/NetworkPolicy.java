package io.stasis.sdk;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;

/**
 * A sandbox's network policy: the {@code network} object of {@code POST /v1/sandboxes} and of
 * {@code PUT /v1/sandboxes/{id}/network}. It is always the whole policy: what it leaves out is
 * not kept from an earlier one. Some destinations stay blocked whatever it says (the host, other
 * sandboxes, link-local and loopback addresses, private ranges the operator did not open).
 *
 * <pre>{@code
 * NetworkPolicy pip = NetworkPolicy.builder()
 *         .denyByDefault()
 *         .allow("pypi.org", "*.pythonhosted.org")
 *         .deny("10.0.0.0/8")
 *         .build();
 * Sandbox sandbox = client.sandboxes().create(CreateSandboxRequest.builder().template("base").network(pip).build());
 * sandbox.exec("pip", "install", "requests");                       // reaches PyPI, nothing else
 * sandbox.updateNetwork(pip.toBuilder().allow("github.com").build()); // replaces the policy
 * }</pre>
 *
 * @param egress where the sandbox may connect (deny everything when null)
 * @param rules  headers the egress proxy adds to HTTPS requests to some allowed domains (secrets among them)
 */
public record NetworkPolicy(EgressPolicy egress, @JsonInclude(JsonInclude.Include.NON_EMPTY) List<HeaderRule> rules) {
    public NetworkPolicy {
        if (egress == null) egress = new EgressPolicy(null, null, null);
        rules = rules == null ? List.of() : List.copyOf(rules);
    }

    public NetworkPolicy(EgressPolicy egress) {
        this(egress, List.of());
    }

    /** A policy that lets nothing out (the server's own default unless its operator changed it). */
    public static NetworkPolicy denyAll() {
        return builder().denyByDefault().build();
    }

    /** A policy that lets out everything that is not blocked for every sandbox. */
    public static NetworkPolicy allowAll() {
        return builder().allowByDefault().build();
    }

    /** A builder that starts from deny by default and empty lists. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding this policy, to change a part of it. */
    public Builder toBuilder() {
        return builder().egress(egress).rules(rules);
    }

    /**
     * Builds a {@link NetworkPolicy}. The default is deny until told otherwise; {@code allow} and
     * {@code deny} add entries in order. Entries are checked by the server ({@code invalid_request}
     * naming the entry); here only empty ones are refused.
     */
    public static final class Builder {
        private EgressPolicy.Action defaultAction = EgressPolicy.Action.DENY;
        private final List<String> allow = new ArrayList<>();
        private final List<String> deny = new ArrayList<>();
        private final List<HeaderRule> rules = new ArrayList<>();

        private Builder() {
        }

        /** Destinations no entry names are refused (the default). */
        public Builder denyByDefault() {
            return defaultAction(EgressPolicy.Action.DENY);
        }

        /** Destinations no entry names are reached. */
        public Builder allowByDefault() {
            return defaultAction(EgressPolicy.Action.ALLOW);
        }

        public Builder defaultAction(EgressPolicy.Action action) {
            this.defaultAction = Objects.requireNonNull(action, "action");
            return this;
        }

        /** Adds destinations the sandbox may reach: {@code example.com}, {@code *.example.com}, {@code 192.0.2.7}, {@code 10.0.0.0/8}. */
        public Builder allow(String... entries) {
            return allow(List.of(entries));
        }

        public Builder allow(Collection<String> entries) {
            add(allow, "allow", entries);
            return this;
        }

        /** Adds destinations the sandbox may not reach, whatever the allow entries say. */
        public Builder deny(String... entries) {
            return deny(List.of(entries));
        }

        public Builder deny(Collection<String> entries) {
            add(deny, "deny", entries);
            return this;
        }

        /** Replaces the default and both lists with those of {@code egress}. */
        public Builder egress(EgressPolicy egress) {
            defaultAction(egress.defaultAction());
            allow.clear();
            deny.clear();
            return allow(egress.allow()).deny(egress.deny());
        }

        /**
         * Adds a rule: HTTPS requests to {@code domain} get {@code header: value}, for example
         * {@code rule("api.example.com", "Authorization", "Bearer {{secret:EXAMPLE_KEY}}")}.
         */
        public Builder rule(String domain, String header, String value) {
            rules.add(HeaderRule.of(domain, header, value));
            return this;
        }

        /** Replaces the rules with {@code replacement}. */
        public Builder rules(Collection<HeaderRule> replacement) {
            rules.clear();
            rules.addAll(replacement);
            return this;
        }

        public NetworkPolicy build() {
            return new NetworkPolicy(new EgressPolicy(defaultAction, allow, deny), rules);
        }

        private static void add(List<String> list, String name, Collection<String> entries) {
            for (String entry : entries) {
                if (entry == null || entry.isBlank()) throw new IllegalArgumentException(name + "[" + list.size() + "] is empty");
                list.add(entry.strip());
            }
        }
    }
}
